import KeepAliveCore
import KeepAliveHostProtocol
import KeepAliveSleep

/// The host's decisions, as a value: events in, actions out, on the host's clock (the time
/// since it started), shaped like ``DeviceSleepMachine``. It owns every app's machine
/// (``HostedAppMachine``, one per app, the current launch's): an app's event goes to its
/// machine, and what that decides comes out as the app's actions (ask, freeze, thaw, send,
/// launch, kill). What is the host's alone it decides from what every app is now (``Facts``),
/// so that what the host wants is computed from the state, never remembered to be updated:
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
struct HostMachine: Sendable {
    /// One app as the host sees it when it decides: what its model and its processes say
    /// (told by the host), and what its own machine says of it (filled in by this machine from
    /// the app's ``HostedAppMachine``, never read back by the host).
    struct App: Sendable, Equatable {
        var id: String
        /// Its model's state.
        var state: AppState
        /// Its first process runs.
        var isRunning: Bool
        /// The kernel tells its exit (a pidfd): else the host looks for it.
        var isExitTold: Bool
        /// Its model has the audio background mode (the host reads ALSA while it runs).
        var hasAudioMode: Bool
        /// It runs a processing task (the host reads the power supply while it does).
        var runsProcessingTask: Bool
        /// Its model runs a scheduled task.
        var runsScheduledTask: Bool
        /// Its scheduled work not yet run.
        var pendingTasks: [BackgroundTaskRequest]
        /// It has conditions for the host to watch.
        var hasConditions: Bool
        /// Its model's next event, on the host's clock.
        var nextModelEvent: Duration?
        /// What the device's sleep is told of it (its state, authorization and modes).
        var sleepRules: DeviceSleepMachine.AppRules
        /// What its own machine decides on.
        var facts: HostedAppMachine.Facts

        /// Not running, and the host may launch it (not quit by its user, not adopted): its machine's.
        fileprivate(set) var mayBeLaunched = false
        /// A launch of it is under way: its machine's.
        fileprivate(set) var isLaunching = false
        /// The host watches its conditions now: its machine's rule, on its authorization and state.
        fileprivate(set) var watchesConditions = false
        /// When the earliest wake its budgets put off falls due: its machine's.
        fileprivate(set) var nextWaitingWake: Duration?

        init(
            id: String, state: AppState, isRunning: Bool, isExitTold: Bool, hasAudioMode: Bool, runsProcessingTask: Bool,
            runsScheduledTask: Bool, pendingTasks: [BackgroundTaskRequest], hasConditions: Bool, nextModelEvent: Duration?,
            sleepRules: DeviceSleepMachine.AppRules, facts: HostedAppMachine.Facts
        ) {
            (self.id, self.state, self.isRunning, self.isExitTold) = (id, state, isRunning, isExitTold)
            (self.hasAudioMode, self.runsProcessingTask, self.runsScheduledTask) = (hasAudioMode, runsProcessingTask, runsScheduledTask)
            (self.pendingTasks, self.hasConditions, self.nextModelEvent) = (pendingTasks, hasConditions, nextModelEvent)
            (self.sleepRules, self.facts) = (sleepRules, facts)
        }

        /// It runs scheduled work, or is being launched for it.
        var runsScheduledWork: Bool { runsScheduledTask || isLaunching }

        /// Frozen or not running: its work wakes the device, it does not hold it.
        var isIdle: Bool { state == .suspended || mayBeLaunched }

        /// Whether something of it changes that nothing tells the host of, now.
        func needsLooking(at now: Duration) -> Bool {
            if isRunning, !isExitTold { return true }  // an exit no pidfd tells
            if state.isRunning, hasAudioMode { return true }  // ALSA
            if runsProcessingTask { return true }  // the power supply
            // Work waiting on power or a network once due, in the app or for its launch.
            let due = pendingTasks.filter { ($0.earliestBeginDate ?? .zero) <= now }
            return due.contains { $0.requiresExternalPower || $0.requiresNetworkConnectivity } || (mayBeLaunched && !due.isEmpty)
        }
    }

    /// What the host knows when an event comes.
    struct Facts: Sendable, Equatable {
        /// The host's clock.
        var now: Duration
        /// Every app it knows.
        var apps: [App]
        /// How often it looks while something changes that nothing tells it of.
        var housekeepingInterval: Duration = .seconds(1)
        /// Its machine's conditions now (power, network): read only when some work waits on them.
        var conditions: SystemConditions?
        /// Each app's machine's part filled in (``HostMachine/completed(_:)``): not again for
        /// each question asked of the same facts.
        fileprivate(set) var isCompleted = false
    }

    /// What happened.
    enum Event: Sendable {
        /// The host began to serve: its watch and the device's sleep are decided a first time.
        case serving
        /// A request was served: what it changed of the models (a task begun, work scheduled) may
        /// come before the loop's deadline.
        case requestServed
        /// Something of an app changed outside its machine: the host's own decisions are taken
        /// again from what every app is now.
        case changed(String, AppChange)
        /// The loop's deadline came: what is due now is done (launches for due work).
        case tick
        /// Another service of the host wants fixes (`true`) or no longer (``AppHost/setFixesWanted(_:by:)``).
        case fixesWanted(Bool, by: String)
        /// The device is about to sleep: the watch closes.
        case deviceWillSleep
        /// The device resumed: the watch opens again; the wakes are told afresh (a wake spent what was due).
        case deviceResumed
        /// An app the host found as it started (adopted, or known from its launch record), with
        /// its machine. Nothing is decided for it yet: the host does not run.
        case known(String, HostedAppMachine)
        /// A new launch of an app begins, for `reason` (`nil`: its user's): its machine goes on
        /// from the last launch's (budgets, wakes put off, notices waiting), which is kept until
        /// the launch ``launchEnded(_:started:)``.
        case launching(String, reason: String?, inBackground: Bool, dataWakes: WakeBudget, eventWakes: WakeBudget)
        /// The launch of an app ended: `started`, its process runs in its group; else the last
        /// launch's machine is back, holding what the failed launch held, and told it failed
        /// (the one place a failed launch is told).
        case launchEnded(String, started: Bool)
        /// Something happened to one app (a model's event, a kernel's word, a notice answered, a
        /// location event, its hello...): for its machine, on `facts`.
        case app(String, HostedAppMachine.Event, HostedAppMachine.Facts)
    }

    /// What changed of an app outside its machine.
    enum AppChange: Sendable {
        /// Its authorization (its file changed): whether its conditions are watched.
        case authorization
        /// Its model entered the background, or the app's handler of it ended.
        case background
        /// Its conditions were added or removed.
        case conditions
        /// Its connection closed: what it reported ends.
        case connection
        /// Its first process exited.
        case exited
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
        /// What an app's machine decided for it.
        case app(String, HostedAppMachine.Action)
    }

    /// Whether the host follows the device's sleep (it has a keeper to tell).
    let followsSleep: Bool
    /// How long after the apps' conditions start to be watched while they do not run the first
    /// monitoring check wakes the device: the keeper's budget's interval.
    let monitoringInterval: Duration
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
    /// Each app's machine: its current launch's.
    private(set) var apps: [String: HostedAppMachine] = [:]
    /// The last launch's machine of each app whose new launch is under way (`nil`: its first).
    private var lastLaunches: [String: HostedAppMachine?] = [:]

    init(followsSleep: Bool, monitoringInterval: Duration = WakeKind.monitoring.defaultBudget.interval) {
        self.followsSleep = followsSleep
        self.monitoringInterval = monitoringInterval
    }

    /// What to do for `event`, from what every app is now: what the host told of each, and what
    /// each app's machine says, before the event and, for the host's own decisions, after it.
    mutating func handle(_ event: Event, _ told: Facts) -> [Action] {
        var told = told
        told.isCompleted = false  // filled in from the machines as they are now, before and after the event
        var facts = completed(told)
        var actions: [Action] = []
        switch event {
        case .known(let id, let machine):
            apps[id] = machine
            return []
        case .launching(let id, let reason, let inBackground, let dataWakes, let eventWakes):
            let last = apps[id]
            lastLaunches[id] = .some(last)
            apps[id] = HostedAppMachine(
                launchedFor: reason, inBackground: inBackground, dataWakes: dataWakes, eventWakes: eventWakes, continuing: last
            )
        case .launchEnded(let id, let started):
            let began = lastLaunches.keys.contains(id)
            let last = lastLaunches.removeValue(forKey: id) ?? nil
            let app = facts.apps.first { $0.id == id }
            if started, let app { actions += self.app(id, .started, app.facts) }
            // Failed: the last launch's machine is back, with what the failed one held; failed
            // before it began (no group made), the machine it has hears it, once, here.
            if !started, let failed = apps[id] {
                if began { apps[id] = last }
                if let app { actions += self.app(id, .launchFailed(waiting: failed.pending), app.facts) }
            }
        case .app(let id, let event, let appFacts): actions += app(id, event, appFacts)
        case .serving, .requestServed, .changed: break
        case .tick:
            armed = nil  // the deadline came: the next one is armed, whatever it is
            actions += dueLaunches(facts)
        case .fixesWanted(let wanted, let service):
            if wanted { fixesWanted.insert(service) } else { fixesWanted.remove(service) }
        case .deviceWillSleep: isDeviceAsleep = true
        case .deviceResumed:
            isDeviceAsleep = false
            (toldRefresh, toldMonitoring) = (nil, false)  // a wake spent what was due: told again from now
            armed = nil  // the loop's timer counts only the time awake
        }
        facts = completed(told)  // what the event changed of the apps' machines
        return actions + watch(facts) + sleep(facts) + deadline(facts) + said(facts)
    }

    /// What the host says of its apps to those who read it from other threads: whether
    /// scheduled work runs (a refresh wake waits on it), which apps are in the foreground.
    private mutating func said(_ facts: Facts) -> [Action] {
        var actions: [Action] = []
        let running = facts.apps.contains(where: \.runsScheduledWork)
        if running != runsScheduledWork {
            runsScheduledWork = running
            actions.append(.scheduledWork(isRunning: running))
        }
        let inForeground = Set(facts.apps.filter(\.state.isInForeground).map(\.id))
        if inForeground != foreground {
            foreground = inForeground
            actions.append(.foreground(inForeground))
        }
        return actions
    }

    /// `facts` with what each app's machine says of it.
    func completed(_ facts: Facts) -> Facts {
        guard !facts.isCompleted else { return facts }
        var facts = facts
        facts.isCompleted = true
        for index in facts.apps.indices {
            var app = facts.apps[index]
            let machine = apps[app.id]
            app.mayBeLaunched = machine?.mayBeLaunched(app.facts) ?? false
            app.isLaunching = machine?.isLaunching ?? false
            app.watchesConditions =
                app.hasConditions && machine?.watchesConditions(app.facts, authorization: app.sleepRules.authorization) == true
            app.nextWaitingWake = machine?.nextWaitingWake(from: facts.now)
            facts.apps[index] = app
        }
        return facts
    }

    /// The apps whose conditions the host watches now.
    func watchedApps(_ facts: Facts) -> Set<String> {
        Set(completed(facts).apps.filter(\.watchesConditions).map(\.id))
    }

    /// Whether the watch is wanted now.
    func wantsWatch(_ facts: Facts) -> Bool {
        !isDeviceAsleep && (!fixesWanted.isEmpty || completed(facts).apps.contains(where: \.watchesConditions))
    }

    /// Whether the host must look every housekeeping interval: something changes that nothing
    /// tells it of (an exit no pidfd tells, ALSA, the power supply, work waiting on power or a
    /// network once due, in the app or for its launch).
    func needsLooking(_ facts: Facts) -> Bool {
        completed(facts).apps.contains { $0.needsLooking(at: facts.now) }
    }

    /// Whether the host reads its conditions (power, network) at a tick: some work waits or runs
    /// (or its app is launched for it).
    func needsConditions(_ facts: Facts) -> Bool {
        completed(facts).apps.contains { !$0.pendingTasks.isEmpty || $0.runsScheduledWork }
    }

    /// When the loop wakes next.
    func nextDeadline(_ facts: Facts) -> Duration {
        let facts = completed(facts)
        let launches = facts.apps.filter(\.mayBeLaunched).flatMap { $0.pendingTasks.compactMap(\.earliestBeginDate) }
            .filter { $0 > facts.now }
        var next = (facts.apps.compactMap(\.nextModelEvent) + launches + facts.apps.compactMap(\.nextWaitingWake)).min()
            ?? .seconds(Int64.max / 2)
        if needsLooking(facts) { next = min(next, facts.now + facts.housekeepingInterval) }
        return next
    }

    private mutating func watch(_ facts: Facts) -> [Action] {
        let wanted = wantsWatch(facts)
        guard wanted != isWatching else { return [] }
        isWatching = wanted
        return [wanted ? .openWatch : .closeWatch]
    }

    private mutating func deadline(_ facts: Facts) -> [Action] {
        let next = nextDeadline(facts)
        guard next != armed else { return [] }
        armed = next
        return [.arm(next)]
    }

    /// One app's event, for its machine; what it decides, as the app's actions.
    private mutating func app(_ id: String, _ event: HostedAppMachine.Event, _ facts: HostedAppMachine.Facts) -> [Action] {
        guard var machine = apps[id] else { return [] }
        let decided = machine.handle(event, facts)
        apps[id] = machine
        return decided.map { .app(id, $0) }
    }

    /// Apps not running (not quit by the user) with scheduled work due now whose conditions
    /// hold: their machines are told the work is due.
    private mutating func dueLaunches(_ facts: Facts) -> [Action] {
        facts.apps.filter { app in
            app.mayBeLaunched && !app.isLaunching
                && app.pendingTasks.contains {
                    ($0.earliestBeginDate ?? .zero) <= facts.now && facts.conditions.map($0.canRun(under:)) ?? true
                }
        }.flatMap { app($0.id, .scheduledWorkDue, $0.facts) }
    }

    /// The device's sleep: the work that wakes it first, so that its alarm is armed before a
    /// suspended app lets it sleep; then each app's rules that changed.
    private mutating func sleep(_ facts: Facts) -> [Action] {
        guard followsSleep else { return [] }
        var actions: [Action] = []
        let idle = facts.apps.filter(\.isIdle)
        let refresh = idle.flatMap { $0.pendingTasks.map { $0.earliestBeginDate ?? facts.now } }.min()
        if refresh != toldRefresh {
            toldRefresh = refresh
            actions.append(.wake(.refresh, at: refresh.map { max($0, facts.now) }))
        }
        let monitoring = idle.contains(where: \.watchesConditions)
        if monitoring != toldMonitoring {
            toldMonitoring = monitoring
            actions.append(.wake(.monitoring, at: monitoring ? facts.now + monitoringInterval : nil))
        }
        for app in facts.apps where toldRules[app.id] != app.sleepRules {
            if app.sleepRules.state == .notRunning {
                guard toldRules.removeValue(forKey: app.id) != nil else { continue }
            } else {
                toldRules[app.id] = app.sleepRules
            }
            actions.append(.sleepRules(app.sleepRules))
        }
        return actions
    }
}
