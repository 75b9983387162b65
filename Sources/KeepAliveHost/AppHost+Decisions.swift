import Dispatch
import KeepAliveCore
import KeepAliveHostProtocol
import KeepAliveMonitoring
import KeepAliveSleep

/// The host's decisions (``HostMachine``), done: every event goes to the machine with the
/// time, and what it decides is done here, the host's only hands on its apps, its watch, its
/// loop's deadline and the device's sleep.
extension AppHost {
    /// Tells the host's machine what happened, now, and does what it decides, in order.
    /// Nothing is decided before ``run()`` serves (the watch has nowhere to send fixes).
    func decide(_ event: HostMachine.Event) {
        guard arrivals != nil else { return }
        for action in machine.handle(event, now: elapsed) { perform(action) }
    }

    /// Changes `app`'s value in the host's machine (its model, what it reported), now, and
    /// does what follows.
    ///
    /// - Returns: what `body` returned (`nil`: the machine has no such app).
    @discardableResult
    func change<T>(_ app: HostedApp, _ body: (inout HostMachine.App) -> T) -> T? {
        let (value, actions) = machine.change(app.id, now: elapsed, body)
        for action in actions { perform(action) }
        return value
    }

    /// A tick of the host's loop (its deadline, an exit the kernel told, a wake for due work):
    /// exits and ALSA are looked at, the machine's conditions read once when some work waits on
    /// them, and what is due is decided.
    func tick() {
        housekeeping()
        decide(.tick(conditions: machine.needsConditions ? configuration.conditions() : nil))
    }

    /// The app's value in the host's machine: its model, its machine, what it reported.
    func value(of app: HostedApp) -> HostMachine.App? { machine.apps[app.id] }

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
        case .lifecycle(let id, let event):
            guard let app = apps[id] else { return }
            modelDidChange(app, event)
        case .app(let id, let action):
            guard let app = apps[id] else { return }
            perform(action, for: app)
        }
    }

    private func openWatch() {
        guard let arrivals else { return }
        watch = HostLocationWatch(configuration, tasks: tasks, logger: logger, observers: fixObservers, arrivals: arrivals) { [emit] in
            emit(.error($0))
        }
        emit(.watching(true))
    }
}
