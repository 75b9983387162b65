import KeepAliveCore
import KeepAliveHostProtocol
import KeepAliveSleep

/// The host's decisions, as a value: events in, actions out, on the host's clock (the time
/// since it started), shaped like ``DeviceSleepMachine``. It holds one value per app (``App``:
/// its model, its own machine, what the host said of its processes), moves every model to the
/// time of each event itself, and decides each event once: what an app's machine decides of
/// the model (a wake for a location event, a kill, entering the background) is done to the
/// model here, and the model's events that follow (resumed, terminated) are decided in the
/// same pass, so that a fix that wakes a frozen app comes out as one list of actions (the
/// resume said, the waits ended, the thaw; the thaw's end, the kernel's word, sends what waited).
/// What the host's hands do comes out
/// as the app's actions (ask, freeze, thaw, send, launch, kill). What is the host's alone it
/// decides from what every app is now, computed from the state, never remembered to be updated:
/// - **the watch** of the receiver: open while some app's conditions are watched or another
///   service of the host wants fixes, closed while the device sleeps;
/// - **the next deadline** of its loop: the models' next event, a scheduled task of an app that
///   is not running, a wake put off, or the housekeeping interval while something changes that
///   nothing tells the host of (an adopted app's exit, ALSA, the power supply and the network);
/// - **the launches for due work**: an app that exited with scheduled work due, whose conditions
///   hold;
/// - **the device's sleep**: each app's rules, and the work that wakes the device (a refresh at
///   the earliest begin date of an idle app's task, the monitoring check while conditions of
///   apps that do not run are watched), told to the keeper when they change.
struct HostMachine {
    /// What happened.
    enum Event {
        /// The host began to serve: its watch and the device's sleep are decided a first time.
        case serving
        /// A request came: the models are brought to now before it is read or served.
        case request
        /// The loop's deadline came: the models catch up, `conditions` (read only when some work
        /// waits on them) go to every model, the wakes put off that are due are done, and the
        /// launches for due work.
        case tick(conditions: SystemConditions?)
        /// Another service of the host wants fixes (`true`) or no longer (``AppHost/setFixesWanted(_:by:)``).
        case fixesWanted(Bool, by: String)
        /// The device is about to sleep: the watch closes.
        case deviceWillSleep
        /// The device resumed: the watch opens again; the wakes are told afresh (a wake spent what was due).
        case deviceResumed
        /// An app the host found as it started (adopted, or known from its launch record).
        /// Nothing is decided for it yet: the host does not run.
        case known(App)
        /// A new launch of an app begins with its new model, for `reason` (`nil`: its user's):
        /// the model takes the last launch's scheduled work and is launched; its machine goes on
        /// from the last launch's (budgets, wakes put off, notices waiting), which is kept, with
        /// the last model, until the launch ``launchEnded(_:started:exitTold:)``.
        case launching(String, Application, reason: String?, inBackground: Bool, dataWakes: WakeBudget, eventWakes: WakeBudget)
        /// The launch of an app ended: `started`, its process runs in its group (`exitTold`: a
        /// pidfd tells its exit); else the last launch is back, holding what the failed launch
        /// held, and told it failed (the one place a failed launch is told).
        case launchEnded(String, started: Bool, exitTold: Bool = true)
        /// An app's first process exited: its model ends, if it had not.
        case exited(String)
        /// An app's conditions were added or removed: whether it has some now.
        case conditions(String, hasSome: Bool)
        /// Something happened to one app (a kernel's word, a notice answered, a location event,
        /// its hello...): for its machine.
        case app(String, HostedAppMachine.Event)
    }

    /// What the host does.
    enum Action: Sendable, Equatable {
        /// Open the watch of the receiver.
        case openWatch
        /// Close it.
        case closeWatch
        /// Wake the loop at this time (the host's clock).
        case arm(Duration)
        /// Tell the keeper when this work wakes the device, on the host's clock (`nil`: it does not).
        case wake(WakeKind, at: Duration?)
        /// Tell the keeper an app's rules.
        case sleepRules(DeviceSleepMachine.AppRules)
        /// Say whether some app runs scheduled work or is launched for it (`true`: it began).
        case scheduledWork(isRunning: Bool)
        /// Say which apps are in the foreground (the GeoClue2 service's rule reads it from any thread).
        case foreground(Set<String>)
        /// Say what an app's model did (`lifecycle` events; a reason for `status`).
        case lifecycle(String, AppEvent)
        /// What an app's machine decided for it that the host's hands do (what it decided of the
        /// model is done already).
        case app(String, HostedAppMachine.Action)
    }

    /// Whether the host follows the device's sleep (it has a keeper to tell).
    let followsSleep: Bool
    /// How long after the apps' conditions start to be watched while they do not run the first
    /// monitoring check wakes the device: the keeper's budget's interval.
    let monitoringInterval: Duration
    /// How often it looks while something changes that nothing tells it of.
    let housekeepingInterval: Duration
    /// How long an app's handler of entering the background may take (``AppHost/Configuration/noticeTimeout``).
    var noticeTimeout: Duration
    /// The host's clock, as of the last event.
    private(set) var now: Duration = .zero
    /// Between the announcement of a sleep and the resume.
    private(set) var isDeviceAsleep = false
    /// The host's other services that want the receiver watched now.
    private(set) var fixesWanted: Set<String> = []
    /// Whether the watch is open.
    private(set) var isWatching = false
    /// The loop's deadline armed last.
    private(set) var armed: Duration?
    /// Whether some app ran scheduled work, or was launched for it, as last said.
    private(set) var runsScheduledWork = false
    /// The apps in the foreground, as last said.
    private(set) var foreground: Set<String> = []
    /// What the keeper was last told: the refresh wake's time, whether the monitoring check wakes.
    private var toldRefresh: Duration?
    private var toldMonitoring = false
    /// What the keeper was last told of each app that runs.
    private var toldRules: [String: DeviceSleepMachine.AppRules] = [:]
    /// Every app, its current launch's.
    private(set) var apps: [String: App] = [:]
    /// The last launch of each app whose new launch is under way (`nil`: its first).
    private var lastLaunches: [String: App?] = [:]

    init(
        followsSleep: Bool,
        monitoringInterval: Duration = WakeKind.monitoring.defaultBudget.interval,
        housekeepingInterval: Duration = .seconds(1),
        noticeTimeout: Duration = .seconds(2)
    ) {
        self.followsSleep = followsSleep
        self.monitoringInterval = monitoringInterval
        self.housekeepingInterval = housekeepingInterval
        self.noticeTimeout = noticeTimeout
    }

    /// What to do for `event` at `now` (the host's clock): every model is brought to `now`
    /// first (what its timers did decided on the way), then the event, then the host's own
    /// decisions from what every app is after it.
    mutating func handle(_ event: Event, now time: Duration) -> [Action] {
        var actions = advance(to: time)
        switch event {
        case .known(let app):
            apps[app.id] = app
            return []
        case .launching(let id, let model, let reason, let inBackground, let dataWakes, let eventWakes):
            actions += launching(id, model, reason: reason, inBackground: inBackground, dataWakes: dataWakes, eventWakes: eventWakes)
        case .launchEnded(let id, let started, let exitTold): actions += launchEnded(id, started: started, exitTold: exitTold)
        case .exited(let id):
            setRunning(id, false, exitTold: false)
            if let model = apps[id]?.model, model.state != .notRunning { model.terminate() }
            actions += decideModelEvents(of: id)
        case .conditions(let id, let hasSome): setConditions(id, hasSome)
        case .app(let id, let event): actions += tell(id, event)
        case .serving, .request: break
        case .tick(let conditions):
            armed = nil  // the deadline came: the next one is armed, whatever it is
            if let conditions { for app in apps.values { app.model.conditions = conditions } }
            for id in apps.keys.sorted() where !(apps[id]?.machine.waitingWakes.isEmpty ?? true) { actions += tell(id, .tick) }
            actions += dueLaunches(conditions)
        case .fixesWanted(let wanted, let service):
            if wanted { fixesWanted.insert(service) } else { fixesWanted.remove(service) }
        case .deviceWillSleep: isDeviceAsleep = true
        case .deviceResumed:
            isDeviceAsleep = false
            (toldRefresh, toldMonitoring) = (nil, false)  // a wake spent what was due: told again from now
            armed = nil  // the loop's timer counts only the time awake
        }
        return actions + decided()
    }

    /// The host's change to app `id`'s model or reports (a request, what ALSA or the kernel
    /// said), at `now`: the models brought to `now`, `body` done, and what follows decided as
    /// for any event.
    ///
    /// - Returns: what `body` returned (`nil`: no such app), and what to do.
    @discardableResult
    mutating func change<T>(_ id: String, now time: Duration, _ body: (inout App) -> T) -> (value: T?, actions: [Action]) {
        var actions = advance(to: time)
        guard var app = apps[id] else { return (nil, actions + decided()) }
        let value = body(&app)
        apps[id] = app
        actions += decideModelEvents(of: id)
        return (value, actions + decided())
    }

    /// The host's own decisions, from what every app is now.
    private mutating func decided() -> [Action] {
        watch() + sleep() + deadline() + said()
    }

    private mutating func launching(
        _ id: String, _ model: Application, reason: String?, inBackground: Bool, dataWakes: WakeBudget, eventWakes: WakeBudget
    ) -> [Action] {
        let last = apps[id]
        lastLaunches[id] = .some(last)
        let machine = HostedAppMachine(
            launchedFor: reason, inBackground: inBackground, dataWakes: dataWakes, eventWakes: eventWakes, continuing: last?.machine
        )
        var app = App(id: id, model: model, machine: machine, isLaunchable: true)
        app.watches(last?.hasConditions ?? false)
        apps[id] = app
        model.advance(to: now)
        for request in last?.model.pendingTaskRequests ?? [] { try? model.submit(request) }
        model.launch()
        return decideModelEvents(of: id)
    }

    private mutating func launchEnded(_ id: String, started: Bool, exitTold: Bool) -> [Action] {
        let began = lastLaunches.keys.contains(id)
        let last = lastLaunches.removeValue(forKey: id) ?? nil
        if started {
            setRunning(id, true, exitTold: exitTold)
            return tell(id, .started)
        }
        // Failed: the last launch is back, with what the failed one held; failed before it
        // began (no group made), the machine it has hears it, once, here.
        guard let failed = apps[id] else { return [] }
        if began { apps[id] = last }
        return tell(id, .launchFailed(waiting: failed.machine.pending))
    }

    /// What the host says of its apps to those who read it from other threads: whether
    /// scheduled work runs (a refresh wake waits on it), which apps are in the foreground.
    private mutating func said() -> [Action] {
        var actions: [Action] = []
        let running = apps.values.contains(where: \.runsScheduledWork)
        if running != runsScheduledWork {
            runsScheduledWork = running
            actions.append(.scheduledWork(isRunning: running))
        }
        let inForeground = Set(apps.values.filter(\.model.state.isInForeground).map(\.id))
        if inForeground != foreground {
            foreground = inForeground
            actions.append(.foreground(inForeground))
        }
        return actions
    }

    /// The apps whose conditions the host watches now.
    var watchedApps: Set<String> { Set(apps.values.filter(\.watchesConditions).map(\.id)) }

    /// Whether the watch is wanted now.
    var wantsWatch: Bool { !isDeviceAsleep && (!fixesWanted.isEmpty || apps.values.contains(where: \.watchesConditions)) }

    /// Whether the host must look every housekeeping interval: something changes that nothing
    /// tells it of (an exit no pidfd tells, ALSA, the power supply, work waiting on power or a
    /// network once due, in the app or for its launch).
    var needsLooking: Bool { apps.values.contains { $0.needsLooking(at: now) } }

    /// Whether the host reads its conditions (power, network) at a tick: some work waits or runs
    /// (or its app is launched for it).
    var needsConditions: Bool { apps.values.contains { !$0.model.pendingTaskRequests.isEmpty || $0.runsScheduledWork } }

    /// When the loop wakes next: the models' next event, a scheduled task of an app that may be
    /// launched, a wake put off, or the housekeeping interval while the host must look.
    var nextDeadline: Duration {
        let launches = apps.values.filter(\.mayBeLaunched).flatMap { $0.model.pendingTaskRequests.compactMap(\.earliestBeginDate) }
            .filter { $0 > now }
        let models = apps.values.compactMap(\.model.nextEventTime)
        var next = (models + launches + apps.values.compactMap { $0.machine.nextWaitingWake(from: now) }).min() ?? .seconds(Int64.max / 2)
        if needsLooking { next = min(next, now + housekeepingInterval) }
        return next
    }

    /// Whether the decision `step` still wants app `id` frozen (a check of a frozen group the
    /// kernel says changed goes ahead only then).
    func holdsFreeze(_ id: String, _ step: Int) -> Bool {
        guard let app = apps[id] else { return false }
        return app.machine.holdsFreeze(step, app.facts(at: now))
    }

    private mutating func watch() -> [Action] {
        let wanted = wantsWatch
        guard wanted != isWatching else { return [] }
        isWatching = wanted
        return [wanted ? .openWatch : .closeWatch]
    }

    private mutating func deadline() -> [Action] {
        let next = nextDeadline
        guard next != armed else { return [] }
        armed = next
        return [.arm(next)]
    }

    /// Apps not running (not quit by the user) with scheduled work due now whose conditions
    /// hold: their machines are told the work is due.
    private mutating func dueLaunches(_ conditions: SystemConditions?) -> [Action] {
        let due = apps.values.filter { app in
            app.mayBeLaunched && !app.machine.isLaunching
                && app.model.pendingTaskRequests.contains {
                    ($0.earliestBeginDate ?? .zero) <= now && conditions.map($0.canRun(under:)) ?? true
                }
        }
        return due.map(\.id).sorted().flatMap { tell($0, .scheduledWorkDue) }
    }

    /// The device's sleep: the work that wakes it first, so that its alarm is armed before a
    /// suspended app lets it sleep; then each app's rules that changed.
    private mutating func sleep() -> [Action] {
        guard followsSleep else { return [] }
        var actions: [Action] = []
        let idle = apps.values.filter(\.isIdle)
        let refresh = idle.flatMap { $0.model.pendingTaskRequests.map { $0.earliestBeginDate ?? now } }.min()
        if refresh != toldRefresh {
            toldRefresh = refresh
            actions.append(.wake(.refresh, at: refresh.map { max($0, now) }))
        }
        let monitoring = idle.contains(where: \.watchesConditions)
        if monitoring != toldMonitoring {
            toldMonitoring = monitoring
            actions.append(.wake(.monitoring, at: monitoring ? now + monitoringInterval : nil))
        }
        for app in apps.values.sorted(by: { $0.id < $1.id }) where toldRules[app.id] != app.sleepRules {
            let rules = app.sleepRules
            if rules.state == .notRunning {
                guard toldRules.removeValue(forKey: app.id) != nil else { continue }
            } else {
                toldRules[app.id] = rules
            }
            actions.append(.sleepRules(rules))
        }
        return actions
    }
}

extension HostMachine {
    /// Tells an app's machine `event`; what it decides of the model (a wake, a kill, entering
    /// the background) is done to the model here, and the model's events that follow are
    /// decided in turn, in order; the rest comes out as the app's actions.
    private mutating func tell(_ id: String, _ event: HostedAppMachine.Event) -> [Action] {
        guard var app = apps[id] else { return [] }
        let decided = app.tell(event, at: now)
        apps[id] = app
        var actions: [Action] = []
        for action in decided {
            switch action {
            case .wakeForEvent: app.model.wakeForLocationEvent()
            case .killModel(let reason): app.model.kill(because: reason)
            case .enterBackground(let awaitingHandler, let withEventBudget):
                if awaitingHandler {
                    app.model.enterBackground(awaitingHandlerFor: noticeTimeout)
                    actions.append(.app(id, action))  // the host waits for the app's answer
                } else {
                    app.model.enterBackground()
                }
                if withEventBudget { app.model.wakeForLocationEvent() }
            default:
                actions.append(.app(id, action))
                continue
            }
            actions += decideModelEvents(of: id)
        }
        return actions
    }

    /// The model's events of app `id` since they were last decided: each said (``Action/lifecycle(_:_:)``),
    /// then decided by its machine.
    private mutating func decideModelEvents(of id: String) -> [Action] {
        var actions: [Action] = []
        while let event = apps[id]?.modelEvents.next() {
            actions.append(.lifecycle(id, event))
            actions += tell(id, .model(event))
        }
        return actions
    }

    /// Every app's model brought to `time`, and what its timers did there decided.
    private mutating func advance(to time: Duration) -> [Action] {
        now = max(now, time)
        var actions: [Action] = []
        for id in apps.keys.sorted() {
            apps[id]?.model.advance(to: now)
            actions += decideModelEvents(of: id)
        }
        return actions
    }

    /// Marks app `id` as running (its launch ended, `started`) or not.
    private mutating func setRunning(_ id: String, _ started: Bool, exitTold: Bool) {
        apps[id]?.ran(started, exitTold: exitTold)
    }

    /// Says whether app `id` has conditions to watch.
    private mutating func setConditions(_ id: String, _ hasSome: Bool) {
        apps[id]?.watches(hasSome)
    }
}
