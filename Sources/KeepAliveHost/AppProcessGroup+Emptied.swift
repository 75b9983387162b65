import Dispatch
import KeepAliveCore

extension AppProcessGroup {
    /// Waits until no process of the app is left in the group, at most `limit`: woken by the
    /// kernel's word that the group changed (cgroup v2's `cgroup.events`, through inotify), and
    /// else looking every 10 ms. A stopping host waits so, from a cancelled task too: the wait
    /// is never cut short by cancellation, and never spins.
    ///
    /// - Returns: whether the group emptied in time.
    @discardableResult
    func waitUntilEmpty(within limit: Duration) async -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now + limit
        let wakeup = Wakeup()
        let events = kind == .cgroup2 ? path.flatMap { CgroupEvents(folder: $0) { wakeup.fire() } } : nil
        defer { events?.stop() }
        let interval: Duration = events == nil ? .milliseconds(10) : .milliseconds(100)  // the kernel's word, and a backstop
        while !processes().isEmpty {
            guard clock.now < deadline else { return false }
            await wakeup.wait(atMost: min(interval, clock.now.duration(to: deadline)))
        }
        return true
    }
}

/// A wake-up that a kernel event gives, or a timer: awaited with no regard to the task's
/// cancellation (a checked continuation, resumed once).
final class Wakeup: Sendable {
    private let waiter = Locked<(continuation: CheckedContinuation<Void, Never>?, fired: Bool)>((nil, false))

    /// Wakes the wait under way, or the next one.
    func fire() {
        let continuation = waiter.withLock { state in
            defer { state = (nil, state.continuation == nil) }
            return state.continuation
        }
        continuation?.resume()
    }

    /// Returns once fired (since the last wait) or after `limit`.
    func wait(atMost limit: Duration) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let firedAlready = waiter.withLock { state in
                if state.fired {
                    state.fired = false
                    return true
                }
                state.continuation = continuation
                return false
            }
            if firedAlready { return continuation.resume() }
            let nanoseconds = Int(limit.components.seconds) * 1_000_000_000 + Int(limit.components.attoseconds / 1_000_000_000)
            DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(max(0, nanoseconds))) { self.fire() }
        }
    }
}
