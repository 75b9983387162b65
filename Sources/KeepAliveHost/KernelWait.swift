import Dispatch
import KeepAliveCore

/// Waits for something only the kernel can say (a group frozen, thawed, emptied, its processes
/// stopped): woken by the kernel's word that a cgroup v2 group changed where it gives one
/// (`cgroup.events`, through inotify), else looking again each millisecond for the first ten
/// looks (a signal freeze takes about 7 ms), then at intervals growing to 16 ms. Never a spin,
/// and never cut short by cancellation: a stopping host freezes, thaws and waits for its apps
/// from the task whose cancellation stopped it.
enum KernelWait {
    /// Waits until `isDone` holds or `deadline` passes, looking on the caller's actor.
    ///
    /// - Parameter events: the cgroup v2 folder whose `cgroup.events` tells of changes, if any.
    /// - Returns: whether `isDone` held in time.
    static func until(
        _ deadline: ContinuousClock.Instant,
        events folder: String? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ isDone: () -> Bool
    ) async -> Bool {
        let clock = ContinuousClock()
        let changes = ObservedState(0)
        let events = folder.flatMap { CgroupEvents(folder: $0) { changes.update { $0 += 1 } } }
        defer { events?.stop() }
        // With the kernel's word, a backstop; without, a look each millisecond for the first
        // few (most waits end there), then less eager.
        var interval: Duration = events == nil ? .milliseconds(1) : .milliseconds(50)
        var looks = 0
        while !isDone() {
            guard clock.now < deadline else { return false }
            let pause = min(interval, clock.now.duration(to: deadline))
            if events != nil {
                let seen = changes.value
                _ = await changes.wait(until: { $0 != seen }, timeout: pause, ignoringCancellation: true)
            } else {
                await sleep(for: pause)
                looks += 1
                if looks >= 10 { interval = min(interval * 2, .milliseconds(16)) }
            }
        }
        return true
    }

    /// Sleeps for `pause`, in a cancelled task too (there a task's own sleep would end at once):
    /// a Dispatch timer resumes it, no task of its own.
    private static func sleep(for pause: Duration) async {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().asyncAfter(deadline: .now() + max(pause, .zero).dispatchInterval) { continuation.resume() }
        }
    }
}
