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
        let changes = ObservedState(0)
        let events = kind == .cgroup2 ? path.flatMap { CgroupEvents(folder: $0) { changes.update { $0 += 1 } } } : nil
        defer { events?.stop() }
        let interval: Duration = events == nil ? .milliseconds(10) : .milliseconds(100)  // the kernel's word, and a backstop
        while !processes().isEmpty {
            guard clock.now < deadline else { return false }
            let seen = changes.value
            _ = await changes.wait(
                until: { $0 != seen },
                timeout: min(interval, clock.now.duration(to: deadline)),
                ignoringCancellation: true
            )
        }
        return true
    }
}
