/// Work run as child tasks of one task group, handed in from anywhere (an actor, a Dispatch
/// callback, a model's synchronous callback): the host's effects that take time (a notice
/// awaited, a freeze, a thaw, a stop's grace, a launch) are so owned by its run, and a
/// service's device work (a pulse, a one-shot fix) by its work group, which adds each as it
/// comes (``next()``, or all of it with ``run()``) and waits for every one before it returns.
/// None outlives its owner, and none is lost in a stop.
package final class OwnedTasks: Sendable {
    package typealias Job = @Sendable () async -> Void

    private let state = ObservedState<Queue>(Queue())

    private struct Queue: Sendable {
        var jobs: [Job] = []
        var isFinished = false
    }

    /// Hands `job` to the group: it starts as soon as the group takes it.
    ///
    /// - Returns: `false` once the group has stopped taking work (the host has ended).
    package init() {}

    @discardableResult
    package func add(_ job: @escaping Job) -> Bool {
        state.update { queue in
            guard !queue.isFinished else { return false }
            queue.jobs.append(job)
            return true
        }
    }

    /// Hands `job` to the group, to be ended early if its owner says so (``Handle/cancel()``):
    /// a watch that closes, a stream of changes for an app that exited.
    ///
    /// - Returns: its handle; `nil` once the group has stopped taking work.
    package func addCancellable(_ job: @escaping Job) -> Handle? {
        let handle = Handle()
        return add { await handle.run(job) } ? handle : nil
    }

    /// Runs every job handed in, each a child task of one group, until ``finish()``; then
    /// waits for the last.
    package func run() async {
        await withDiscardingTaskGroup { group in
            while let jobs = await next() {
                for job in jobs { group.addTask { await job() } }
            }
        }
    }

    /// A job that can be ended before it ends itself: it runs as the child of a group of its
    /// own, cancelled when ``cancel()`` is called or the group it was handed to is.
    package final class Handle: Sendable {
        private let isCancelled = ObservedState(false)
        private let isEnded = ObservedState(false)

        /// Cancels the job (at once if it has not started: then it never runs).
        package func cancel() { isCancelled.update { $0 = true } }

        /// Waits until the job has ended (or was cancelled before it started), in a cancelled task too.
        package func ended() async {
            while await !isEnded.wait(until: { $0 }, timeout: .seconds(3600), ignoringCancellation: true) {}
        }

        fileprivate func run(_ job: @escaping Job) async {
            await withDiscardingTaskGroup { group in
                if !isCancelled.value {
                    group.addTask {
                        await job()
                        self.cancel()  // ended by itself: the wait below ends too
                    }
                    while !Task.isCancelled, await !isCancelled.wait(until: { $0 }, timeout: .seconds(3600)) {}
                    group.cancelAll()
                }
            }
            isEnded.update { $0 = true }
        }
    }

    /// Takes no more work: ``next()`` says so once what was handed in is taken.
    package func finish() { state.update { $0.isFinished = true } }

    /// The jobs handed in since the last call, once there are any; `nil` once finished and
    /// empty. A cancelled task waits too: the effects of a stopping host are its last ones.
    package func next() async -> [Job]? {
        while true {
            _ = await state.wait(until: { !$0.jobs.isEmpty || $0.isFinished }, timeout: .seconds(3600), ignoringCancellation: true)
            let (jobs, isFinished) = state.update { queue in
                defer { queue.jobs = [] }
                return (queue.jobs, queue.isFinished)
            }
            if !jobs.isEmpty { return jobs }
            if isFinished { return nil }
        }
    }
}
