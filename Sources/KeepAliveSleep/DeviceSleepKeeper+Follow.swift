public import KeepAliveCore

extension DeviceSleepKeeper {
    /// Follows the device's sleep for a tracker made of the library's parts, until the task
    /// is cancelled: the one call a tracker needs. Through logind, the kernel's wakelocks or
    /// both, as the system has them (``Configuration/way``); with location `authorization`
    /// always, the device is held awake while the tracker runs (or, with
    /// `configuration.options.holdsAwake` false, let sleep and woken for a fix as the poll's
    /// budget allows); before each sleep the watch closes, the journal commits and delivery
    /// sends what waits; each sleep, announced or not, is a gap in the journal.
    ///
    /// - Parameters:
    ///   - locationManager: the tracker's fixes; a wake's fix is asked of it.
    ///   - journal: where the tracker records its fixes (a wake's fix is recorded there too).
    ///   - delivery: what sends the journal to its servers.
    ///   - authorization: the tracker's location authorization, followed as it changes (another
    ///     process, a prompt, a denial): only always holds the device or wakes it for a fix; a
    ///     denial lets it go at once. By default the manager's own
    ///     (``LocationManager/authorization``); a manager that enforces none delivers every fix,
    ///     and is followed as always.
    ///   - configuration: the way, the budgets, the bounds; by default what the system has,
    ///     woken for a fix as often as the poll's budget allows (once each 10 minutes).
    ///   - notice: each step (a lock, a sleep, a wake), as it happens.
    /// - Throws: ``SleepError`` when the way cannot be used and `configuration.isRequired`;
    ///   otherwise a system with neither logind nor wakelocks is told to `notice` and the call
    ///   returns.
    public static func follow(
        _ locationManager: LocationManager, journal: (any FixRecorder)? = nil, delivery: (any PausableWork)? = nil,
        authorization: LocationAuthorizationManager? = nil, configuration: Configuration = Configuration(),
        notice: @escaping @Sendable (SleepNotice) -> Void = { _ in }
    ) async throws(SleepError) {
        let authorization = authorization ?? locationManager.authorization
        var configuration = configuration
        if configuration.options.every[.poll] == nil {
            configuration.options.every[.poll] = (configuration.options.budgets[.poll] ?? WakeKind.poll.defaultBudget).interval
        }
        let hands = TrackerSleepHands(
            locationManager: locationManager, journal: journal, delivery: delivery,
            failed: { notice(.failed($0)) }
        )
        let keeper = DeviceSleepKeeper(configuration: configuration, hands: hands, notice: notice)
        // A tracker's only work that needs the device is location always's: with less, it is
        // as an app the model suspends (a background app otherwise holds it while it may run).
        let rules = { @Sendable (status: LocationAuthorization) in
            DeviceSleepMachine.AppRules(state: status == .always ? .background : .suspended, authorization: status, backgroundModes: [.location])
        }
        let status = authorization?.status ?? .always
        keeper.app(rules(status))
        guard let authorization else { return try await keeper.run() }
        // Watched from here on (the stream made now, not in the task, which may start after a
        // change), each change as it comes; one between the read above and now, below.
        let stream = authorization.changes()
        let changes = Task {
            for await snapshot in stream { keeper.app(rules(snapshot.status)) }
        }
        defer { changes.cancel() }
        if authorization.status != status { keeper.app(rules(authorization.status)) }  // changed meanwhile
        try await keeper.run()
    }
}
