import KeepAliveCore

/// Work run as child tasks of one task group, handed in from anywhere (the host's actor, a
/// Dispatch callback): the host's effects that take time (a notice awaited, a freeze, a thaw,
/// a stop's grace, a launch) are so owned by its ``AppHost/run()``, which adds each to its task
/// group as it comes (``next()``) and waits for every one before it returns. None outlives the
/// host, and none is lost in a stop.
final class OwnedTasks: Sendable {
    typealias Job = @Sendable () async -> Void

    private let state = ObservedState<Queue>(Queue())

    private struct Queue: Sendable {
        var jobs: [Job] = []
        var isFinished = false
    }

    /// Hands `job` to the group: it starts as soon as the group takes it.
    ///
    /// - Returns: `false` once the group has stopped taking work (the host has ended).
    @discardableResult
    func add(_ job: @escaping Job) -> Bool {
        state.update { queue in
            guard !queue.isFinished else { return false }
            queue.jobs.append(job)
            return true
        }
    }

    /// Takes no more work: ``next()`` says so once what was handed in is taken.
    func finish() { state.update { $0.isFinished = true } }

    /// The jobs handed in since the last call, once there are any; `nil` once finished and
    /// empty. A cancelled task waits too: the effects of a stopping host are its last ones.
    func next() async -> [Job]? {
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
