import KeepAliveCore
@testable import KeepAliveHost
import Testing

/// How the host waits for the kernel's word (a group frozen, thawed, stopped, emptied): from a
/// cancelled task too, and never in a spin. Before, each wait slept 1 ms with `try? await
/// sleep`, which returns at once in a cancelled task: a stopping host's waits spun.
struct KernelWaitTests {
    @Test func aWaitInACancelledTaskWaitsItsTimeAndLooksOnlyAFewTimes() async {
        let looks = Locked(0)
        let clock = ContinuousClock()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            let start = clock.now
            let done = await KernelWait.until(start + .milliseconds(200)) {
                looks.withLock { $0 += 1 }
                return false
            }
            return (done, start.duration(to: clock.now))
        }
        let (done, waited) = await task.value
        #expect(!done)
        #expect(waited >= .milliseconds(200))
        // Ten looks a millisecond apart, then 2, 4, 8 and 16 ms apart: about 25 in 200 ms, not thousands.
        #expect(looks.withLock { $0 } <= 30)
    }

    @Test func aWaitEndsAsSoonAsItsConditionHolds() async {
        let looks = Locked(0)
        // A deadline no run reaches: beside the other suites, a sleep of 1 ms once took 20 s.
        let done = await KernelWait.until(ContinuousClock().now + .seconds(3600)) {
            looks.withLock { $0 += 1 }
            return looks.withLock { $0 } == 3
        }
        #expect(done)
        #expect(looks.withLock { $0 } == 3)
    }
}
