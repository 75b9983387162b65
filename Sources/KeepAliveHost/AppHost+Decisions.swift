import Dispatch
import KeepAliveCore
import KeepAliveHostProtocol
import KeepAliveMonitoring
import KeepAliveSleep

/// The host's own decisions (``HostMachine``), done: after anything changes, the machine is
/// told and what it decides is done here, the host's only hands on its watch, its loop's
/// deadline, the device's sleep and the launches for due work.
extension AppHost {
    /// Tells the host's machine what happened, with what every app is now, and does what it
    /// decides. Nothing is decided before ``run()`` serves (the watch has nowhere to send fixes).
    /// An input that comes while the actions of another are done (a launch for due work tells
    /// its app's machine, which decides again) waits for them to end, then is decided on what
    /// they did: the machine's decisions are done in the order it made them.
    ///
    /// - Parameter conditions: the machine's conditions (the power supply, a route), read once
    ///   by a tick when some work waits on them: they matter only to launches for due work.
    func decide(_ event: HostMachine.Event, conditions: SystemConditions? = nil) {
        guard arrivals != nil else { return }
        undecided.append((event, conditions))
        guard !isDeciding else { return }
        isDeciding = true
        defer { isDeciding = false }
        while !undecided.isEmpty {
            let (event, conditions) = undecided.removeFirst()
            for action in machine.handle(event, facts(conditions: conditions)) { perform(action) }
        }
    }

    /// A tick of the host's loop (its deadline, an exit the kernel told, a wake for due work):
    /// the models catch up with the time, the machine's conditions are read once when some work
    /// waits on them (for the models and the machine alike), exits and ALSA are looked at, the
    /// wakes put off that are due are done, and what is due is decided.
    func tick() {
        let now = elapsed
        for app in apps.values { app.model.advance(to: now) }
        let conditions = machine.needsConditions(facts()) ? configuration.conditions() : nil
        if let conditions { for app in apps.values { app.model.conditions = conditions } }
        housekeeping()
        serveWaitingWakes()
        decide(.tick, conditions: conditions)
    }

    /// What the host's machine decides on, read now: what each app's model and processes say
    /// (what its own machine says, the machine reads itself).
    func facts(conditions: SystemConditions? = nil) -> HostMachine.Facts {
        let now = elapsed
        let apps = apps.values.sorted { $0.id < $1.id }.map { app in
            let model = app.model
            return HostMachine.App(
                id: app.id,
                state: model.state,
                isRunning: app.pid != nil,
                isExitTold: !app.isAdopted && app.exitWatch != nil,
                hasAudioMode: model.backgroundModes.contains(.audio),
                runsProcessingTask: model.runningScheduledTask?.kind == .processing,
                runsScheduledTask: model.runningScheduledTask != nil,
                pendingTasks: model.pendingTaskRequests,
                hasConditions: !(app.monitor?.identifiers.isEmpty ?? true),
                nextModelEvent: model.nextEventTime,
                sleepRules: DeviceSleepMachine.AppRules(
                    app: app.id, state: model.state, authorization: model.authorization, backgroundModes: model.backgroundModes
                ),
                facts: app.facts(at: now)
            )
        }
        return HostMachine.Facts(
            now: now,
            apps: apps,
            housekeepingInterval: configuration.housekeepingInterval,
            conditions: conditions
        )
    }

    private func perform(_ action: HostMachine.Action) {
        switch action {
        case .openWatch: openWatch()
        case .closeWatch:
            watch?.stop()
            watch = nil
            emit(.watching(false))
        case .arm(let deadline): loopTimer?.arm(after: deadline - elapsed)
        case .wake(let kind, let time):
            // On the boot clock, from the two clocks' readings now (both run on while asleep).
            let now = elapsed
            sleepKeeper?.wake(kind, at: time.map { BootClock.now() + max(.zero, $0 - now) })
        case .sleepRules(let rules): sleepKeeper?.app(rules)
        case .scheduledWork(let running): scheduledWork.update { $0 = (running, $0.starts + (running ? 1 : 0)) }
        case .foreground(let apps): foregroundApps.withLock { $0 = apps }
        case .app(let id, let action):
            guard let app = apps[id] else { return }
            perform(action, for: app)
        }
    }

    private func openWatch() {
        guard let arrivals else { return }
        let emit = emit
        let observers = fixObservers
        watch = HostLocationWatch(
            tasks: tasks,
            source: configuration.locationSource(),
            pause: configuration.stationaryPause,
            logger: logger,
            observe: { fix in for observer in observers.read({ $0 }) { observer(fix) } },
            arrivals: arrivals,
            failed: { emit(.error($0)) }
        )
        emit(.watching(true))
    }
}
