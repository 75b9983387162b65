extension AppProcessGroup {
    /// Waits until no process of the app is left in the group, at most `limit` (``KernelWait``:
    /// woken by cgroup v2's word that the group changed, never cut short by cancellation).
    ///
    /// - Returns: whether the group emptied in time.
    @discardableResult
    func waitUntilEmpty(within limit: Duration) async -> Bool {
        await KernelWait.until(ContinuousClock().now + limit, events: freezing.eventsFolder) { processes().isEmpty }
    }
}
