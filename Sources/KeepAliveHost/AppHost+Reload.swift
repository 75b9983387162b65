extension AppHost {
    /// What a running host takes from a new configuration (SIGHUP on `keepalive host`): the
    /// rules and budgets, the notice timeout, the wake budgets, who apps run as and whether
    /// root or other users' apps may run. An app gets the rules and wake budgets when it is
    /// launched or adopted, so one already running keeps those it started with.
    ///
    /// The rest (the socket, its mode and group, the freezer, the cgroup folder and limits, the
    /// connection limits, gpsd, the monitors' folder) is fixed while the host runs: its apps
    /// live in those groups and its clients hold those sockets.
    public func reload(_ new: Configuration) {
        settings.takeReloadable(from: new)
        machine.noticeTimeout = new.noticeTimeout
    }
}
