import KeepAliveCore
import TestWaiting
import Testing

/// The host's effects as children of its run's task group: every job handed in runs, a
/// cancelled run still takes the jobs of its stop, and the group ends only after the last.
struct OwnedTasksTests {
    @Test func everyJobHandedInRunsAndTheGroupWaitsForTheLast() async {
        let tasks = OwnedTasks()
        let done = Locked<[Int]>([])
        let gate = ObservedState(false)
        await withDiscardingTaskGroup { group in
            group.addTask {
                tasks.add { done.withLock { $0.append(1) } }
                tasks.add {
                    _ = await gate.wait(until: { $0 }, timeout: .seconds(3600))
                    done.withLock { $0.append(2) }
                }
                tasks.finish()
                #expect(!tasks.add { done.withLock { $0.append(3) } }, "no work is taken once finished")
                gate.update { $0 = true }
            }
            while let jobs = await tasks.next() {
                for job in jobs { group.addTask { await job() } }
            }
        }
        #expect(done.withLock { $0.sorted() } == [1, 2])
    }

    @Test func aCancelledRunStillTakesTheJobsOfItsStop() async {
        let tasks = OwnedTasks()
        let ran = Locked(0)
        let run = Task {
            await withDiscardingTaskGroup { group in
                group.addTask {
                    // What a stopping host does after its cancellation: its last effects.
                    _ = await ObservedState(false).wait(until: { $0 }, timeout: .milliseconds(50), ignoringCancellation: true)
                    for _ in 0..<3 { tasks.add { ran.withLock { $0 += 1 } } }
                    tasks.finish()
                }
                while let jobs = await tasks.next() {
                    for job in jobs { group.addTask { await job() } }
                }
            }
        }
        run.cancel()
        await run.value
        #expect(ran.withLock { $0 } == 3)
    }

    /// A job its owner ends early (a watch that closes): cancelled while it runs, or never run
    /// when cancelled before the group took it; ``OwnedTasks/Handle/ended()`` waits for either.
    @Test func aCancellableJobEndsWhenItsOwnerSaysAndNeverRunsWhenCancelledFirst() async {
        let tasks = OwnedTasks()
        let ran = Locked<[String]>([])
        await withDiscardingTaskGroup { group in
            group.addTask { await tasks.run() }
            let never = tasks.addCancellable { ran.withLock { $0.append("never") } }
            never?.cancel()
            let started = ObservedState(false)
            let forever = tasks.addCancellable {
                ran.withLock { $0.append("started") }
                started.update { $0 = true }
                _ = await ObservedState(false).wait(until: { $0 }, timeout: .seconds(3600))  // ends on cancellation only
                ran.withLock { $0.append("cancelled") }
            }
            let quick = tasks.addCancellable { ran.withLock { $0.append("quick") } }
            await quick?.ended()
            #expect(await started.wait(until: { $0 }, timeout: TestTime.patience))
            forever?.cancel()
            await forever?.ended()
            await never?.ended()
            tasks.finish()
        }
        #expect(Set(ran.withLock { $0 }) == ["started", "cancelled", "quick"])
        #expect(tasks.addCancellable {} == nil, "no work is taken once finished")
    }
}
