import Dispatch
import KeepAliveCore
import KeepAliveHostProtocol
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
    func decide(_ event: HostMachine.Event = .changed) {
        guard arrivals != nil else { return }
        undecided.append(event)
        guard !isDeciding else { return }
        isDeciding = true
        defer { isDeciding = false }
        while !undecided.isEmpty {
            let event = undecided.removeFirst()
            // The machine's conditions (the power supply, a route: files of the kernel) matter
            // only to launches for due work, decided at a tick: not read for every request or fix.
            let isTick = if case .tick = event { true } else { false }
            for action in machine.handle(event, facts(readingConditions: isTick)) { perform(action) }
        }
        let running = apps.values.contains(where: runsScheduledWork)
        if running != scheduledWork.value.isRunning {
            scheduledWork.update { $0 = (running, $0.starts + (running ? 1 : 0)) }
        }
    }

    /// What the host's machine decides on, read now; the machine's conditions too, when
    /// `readingConditions` and some work waits on them.
    func facts(readingConditions: Bool) -> HostMachine.Facts {
        let now = elapsed
        let apps = apps.values.sorted { $0.id < $1.id }.map { app in
            let model = app.model
            let machine = appMachine(app)
            return HostMachine.App(
                id: app.id,
                state: model.state,
                isRunning: app.pid != nil,
                isExitTold: !app.isAdopted && app.exitWatch != nil,
                hasAudioMode: model.backgroundModes.contains(.audio),
                runsProcessingTask: model.runningScheduledTask?.kind == .processing,
                runsScheduledWork: runsScheduledWork(app),
                pendingTasks: model.pendingTaskRequests,
                mayBeLaunched: mayBeLaunched(app),
                isLaunching: machine?.isLaunching == true,
                watchesConditions: watchesConditions(of: app),
                nextModelEvent: model.nextEventTime,
                nextWaitingWake: machine?.nextWaitingWake(from: now),
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
            conditions: readingConditions && HostMachine.needsConditions(apps) ? configuration.conditions() : nil
        )
    }

    /// Whether the app runs its scheduled work, or is being launched for it.
    private func runsScheduledWork(_ app: HostedApp) -> Bool {
        app.model.runningScheduledTask != nil || appMachine(app)?.isLaunching == true
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

/// The host loop's one timer: a Dispatch source on a queue of its own, armed for the machine's
/// next deadline; each firing is an input of the loop. Re-arming replaces the deadline.
/// Unchecked: a Dispatch source is thread-safe (scheduled and cancelled from any thread).
final class LoopTimer: @unchecked Sendable {
    private let source: any DispatchSourceTimer

    /// A timer that calls `fire` (on its own queue) at each deadline it is armed for.
    init(fire: @escaping @Sendable () -> Void) {
        source = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "keepalive.host.loop-timer"))
        source.setEventHandler(handler: fire)
        source.schedule(deadline: .distantFuture)
        source.resume()
    }

    deinit { source.cancel() }

    /// Fires once, `delay` from now (at once when it has passed; never, for the machine's
    /// "nothing is due", past what Dispatch counts).
    func arm(after delay: Duration) {
        source.schedule(deadline: .now() + max(delay, .zero).dispatchInterval, leeway: .milliseconds(1))
    }

    /// Fires no more.
    func cancel() { source.cancel() }
}
