import FoundationEssentials
import KeepAliveCore
@testable import KeepAliveHost
import KeepAliveHostProtocol
import KeepAliveMonitoring
import KeepAliveSleep
import Testing

/// The host's own rules, proven on its machine alone, on plain durations and real app models:
/// one value per app (its model, its machine, what the host said of its processes), the models
/// moved to each event's time by the machine, each event decided once, the watch wanted, the
/// loop's next deadline and when it looks, launches for due work, and what the device's sleep
/// is told. The host's suites (HostMonitoringTests, HostScheduledWorkTests,
/// HostDeviceSleepTests...) prove that the host does what it decides.
@Suite struct HostMachineTests {
    typealias Machine = HostMachine

    /// An app's model in `state` (``ExecutionProfile/unlimited``: it changes only when told,
    /// or at a timer of `next`), with `tasks` submitted.
    static func model(
        _ state: AppState,
        audio: Bool = false,
        tasks: [BackgroundTaskRequest] = [],
        next: Duration? = nil,
        onBattery: Bool = false,
        profile: ExecutionProfile = .unlimited
    ) -> Application {
        let modes: BackgroundModes = BackgroundModes(audio ? [.audio] : []).union([.fetch])
        let model = Application(profile: profile, backgroundModes: modes, authorization: .always)
        if onBattery { model.conditions = SystemConditions(hasExternalPower: false) }
        for task in tasks { try? model.submit(task) }
        if state != .notRunning { model.launch() }
        if state == .background || state == .suspended { model.enterBackground() }
        if state == .suspended { model.suspendByHost() }
        if let next { model.scheduleTimer(after: next) {} }
        return model
    }

    /// A machine that knows app `id` as a host that found it at its start: running unless not,
    /// its exit told by a pidfd unless said otherwise, `conditions` to watch.
    static func knowing(
        _ model: Application, running: Bool? = nil, exitTold: Bool = true, launchable: Bool = false, conditions: Bool = false,
        into machine: inout Machine
    ) {
        knowing("a", model, running: running, exitTold: exitTold, launchable: launchable, conditions: conditions, into: &machine)
    }

    static func knowing(
        _ id: String,
        _ model: Application,
        running: Bool? = nil,
        exitTold: Bool = true,
        launchable: Bool = false,
        conditions: Bool = false,
        into machine: inout Machine
    ) {
        let isRunning = running ?? (model.state != .notRunning)
        var app = HostMachine.App(
            id: id, model: model, machine: HostedAppMachine(adopted: false, dataWakes: .data, eventWakes: .events),
            isRunning: isRunning, isExitTold: exitTold, isLaunchable: launchable
        )
        app.isConnected = isRunning
        app.watches(conditions)
        _ = machine.handle(.known(app), now: .zero)  // nothing decided: as a host that does not serve yet
    }

    static func machine(followsSleep: Bool = false, monitoringInterval: Duration = .seconds(600)) -> Machine {
        Machine(followsSleep: followsSleep, monitoringInterval: monitoringInterval, housekeepingInterval: .seconds(1), noticeTimeout: .seconds(2))
    }

    static func refresh(_ name: String = "sync", at seconds: Int?, power: Bool = false) -> BackgroundTaskRequest {
        BackgroundTaskRequest(identifier: name, earliestBeginDate: seconds.map { .seconds($0) }, requiresExternalPower: power)
    }

    static let never = Duration.seconds(Int64.max / 2)

    static let event = HostNotice.locationEvent(
        MonitorEvent(identifier: "home", state: .satisfied, date: Date(timeIntervalSince1970: 0), location: Location(latitude: 52.5, longitude: 13.4)),
        received: 1
    )

    static func rules(_ id: String, _ model: Application) -> DeviceSleepMachine.AppRules {
        DeviceSleepMachine.AppRules(app: id, state: model.state, authorization: model.authorization, backgroundModes: model.backgroundModes)
    }

    // MARK: The watch

    @Test func theWatchIsOpenWhileSomeAppsConditionsAreWatchedAndNotWhileTheDeviceSleeps() {
        var machine = Self.machine()
        Self.knowing(Self.model(.background), into: &machine)
        #expect(machine.handle(.serving, now: .zero) == [.arm(Self.never)])
        #expect(machine.handle(.conditions("a", hasSome: true), now: .zero) == [.openWatch])
        #expect(machine.handle(.request, now: .seconds(1)).isEmpty)  // wanted, and open: nothing to do
        #expect(machine.handle(.deviceWillSleep, now: .seconds(2)) == [.closeWatch])
        #expect(machine.handle(.request, now: .seconds(3)).isEmpty)  // asleep: still closed
        #expect(machine.handle(.deviceResumed, now: .seconds(4)) == [.openWatch, .arm(Self.never)])
        #expect(machine.handle(.conditions("a", hasSome: false), now: .seconds(5)) == [.closeWatch])
    }

    @Test func anotherServiceKeepsTheWatchOpenUntilItNoLongerWantsFixes() {
        var machine = Self.machine()
        _ = machine.handle(.serving, now: .zero)
        #expect(machine.handle(.fixesWanted(true, by: "geoclue"), now: .zero) == [.openWatch])
        #expect(machine.handle(.fixesWanted(true, by: "wake"), now: .zero).isEmpty)
        #expect(machine.handle(.fixesWanted(false, by: "geoclue"), now: .zero).isEmpty)  // the wake still wants them
        #expect(machine.handle(.fixesWanted(false, by: "wake"), now: .zero) == [.closeWatch])
    }

    /// A when-in-use app's conditions are watched only in the foreground: its model's move is
    /// enough, no word from the host about it.
    @Test func theWatchFollowsTheModelsMoveWithoutAWordOfTheHost() {
        var machine = Self.machine()
        let model = Self.model(.active)
        model.authorization = .whenInUse
        Self.knowing(model, conditions: true, into: &machine)
        #expect(machine.handle(.serving, now: .zero).first == .openWatch)
        let (_, actions) = machine.change("a", now: .seconds(1)) { $0.model.enterBackground() }
        #expect(actions.contains(.closeWatch))
        #expect(machine.watchedApps.isEmpty)
    }

    // MARK: The loop's deadline

    @Test func theLoopWakesAtTheEarliestOfTheModelsEventsTheLaunchesAndTheWakesPutOff() {
        var machine = Self.machine()
        Self.knowing("a", Self.model(.background, next: .seconds(30)), into: &machine)
        Self.knowing("b", Self.model(.notRunning, tasks: [Self.refresh(at: 20)]), launchable: true, into: &machine)
        Self.knowWokenTwice(into: &machine)
        _ = machine.handle(.request, now: .seconds(12))
        #expect(machine.nextDeadline == .seconds(20))
        var withoutWork = Self.machine()
        Self.knowing("a", Self.model(.background, next: .seconds(30)), into: &withoutWork)
        Self.knowWokenTwice(into: &withoutWork)
        _ = withoutWork.handle(.request, now: .seconds(12))
        #expect(withoutWork.nextDeadline == .seconds(25), "c's wake put off")
    }

    /// App c, whose budget allows one wake each 25 s, frozen and woken for an event at 0, then
    /// frozen again: a second event at once waits for the next wake.
    static func knowWokenTwice(into machine: inout Machine) {
        let c = HostMachine.App(
            id: "c", model: Self.model(.suspended),
            machine: HostedAppMachine(adopted: false, dataWakes: .data, eventWakes: WakeBudget(burst: 1, interval: .seconds(25))),
            isRunning: true, isExitTold: true, isLaunchable: false
        )
        _ = machine.handle(.known(c), now: .zero)
        _ = machine.handle(.app("c", .locationEvent(Self.event)), now: .zero)
        machine.change("c", now: .zero) { $0.model.suspendByHost() }
        _ = machine.handle(.app("c", .locationEvent(Self.event)), now: .zero)
    }

    /// What nothing tells the host of, it looks for every housekeeping interval: an exit no pidfd
    /// tells, audio on ALSA, the power supply, due work waiting on power or a network, due work
    /// of an app to launch. Else it sleeps until told.
    enum Looked: CaseIterable {
        case exitNotTold, playsAudio, frozenWithAudio, dueOnPower, notDueOnPower, dueOnItsOwnClock, dueToLaunch, nothing
    }

    @Test(arguments: Looked.allCases)
    func theHostLooksOnlyForWhatNothingTellsIt(_ looked: Looked) {
        var machine = Self.machine()
        let (model, exitTold, launchable, looks): (Application, Bool, Bool, Bool) =
            switch looked {
            case .exitNotTold: (Self.model(.suspended), false, false, true)
            case .playsAudio: (Self.model(.background, audio: true), true, false, true)
            case .frozenWithAudio: (Self.model(.suspended, audio: true), true, false, false)  // frozen: it plays nothing
            case .dueOnPower: (Self.model(.suspended, tasks: [Self.refresh(at: 5, power: true)], onBattery: true), true, false, true)
            case .notDueOnPower: (Self.model(.suspended, tasks: [Self.refresh(at: 50, power: true)]), true, false, false)
            case .dueOnItsOwnClock: (Self.model(.suspended, tasks: [Self.refresh(at: 5)]), true, false, false)  // its model runs it
            case .dueToLaunch: (Self.model(.notRunning, tasks: [Self.refresh(at: 5)], onBattery: true), true, true, true)
            case .nothing: (Self.model(.suspended), true, false, false)
            }
        Self.knowing(model, exitTold: exitTold, launchable: launchable, into: &machine)
        _ = machine.handle(.request, now: .seconds(10))
        #expect(machine.needsLooking == looks)
        #expect(machine.nextDeadline == (looks ? .seconds(11) : model.nextEventTime ?? Self.never))
    }

    @Test func theDeadlineIsArmedWhenItChangesAndAgainAfterEachTick() {
        var machine = Self.machine()
        let model = Self.model(.background, next: .seconds(30))
        Self.knowing(model, into: &machine)
        #expect(machine.handle(.serving, now: .zero) == [.arm(.seconds(30))])
        #expect(machine.handle(.request, now: .seconds(5)).isEmpty)
        let (_, sooner) = machine.change("a", now: .seconds(10)) { $0.model.scheduleTimer(after: .seconds(2)) {} }
        #expect(sooner == [.arm(.seconds(12))])
        #expect(machine.handle(.tick(conditions: nil), now: .seconds(12)) == [.arm(.seconds(30))])
    }

    // MARK: The models' time

    /// The machine alone moves the models: a background budget that ends between two events is
    /// decided at the next, in the same pass as the event (the model suspends, its machine asks).
    @Test func theModelsAreMovedToEachEventsTimeAndWhatTheyDidIsDecidedThen() {
        var machine = Self.machine()
        let model = Self.model(.active, profile: .ios13)
        var upload = BackgroundTaskIdentifier.invalid
        upload = model.beginBackgroundTask(named: "upload") { model.endBackgroundTask(upload) }  // ended when told
        model.enterBackground()  // 30 s of background time
        Self.knowing(model, into: &machine)
        _ = machine.handle(.serving, now: .zero)
        #expect(machine.handle(.request, now: .seconds(10)).allSatisfy { if case .lifecycle = $0 { false } else { true } })
        let actions = machine.handle(.request, now: .seconds(31))
        #expect(model.now == .seconds(31) && model.state == .suspended)
        let suspended = actions.firstIndex { if case .lifecycle("a", .suspended) = $0 { true } else { false } }
        let asked = actions.firstIndex(of: .app("a", .askBeforeFreezing(generation: 1)))
        #expect(suspended != nil && asked != nil && suspended! < asked!, "said, then decided: \(actions)")
    }

    // MARK: Launches for due work

    @Test func anAppThatExitedIsLaunchedForItsDueWorkOnlyAtATickAndWhenItsConditionsHold() {
        var machine = Self.machine()
        let launch = HostMachine.Action.app("a", .launch(reason: "scheduled-task"))
        Self.knowing("a", Self.model(.notRunning, tasks: [Self.refresh(at: 5, power: true)]), launchable: true, into: &machine)
        #expect(!machine.handle(.request, now: .seconds(10)).contains(launch))
        #expect(!machine.handle(.tick(conditions: SystemConditions(hasExternalPower: false)), now: .seconds(10)).contains(launch))
        #expect(machine.handle(.tick(conditions: SystemConditions()), now: .seconds(10)).contains(launch))
        #expect(machine.apps["a"]?.machine.isLaunching == true, "its machine took the launch")
        #expect(!machine.handle(.tick(conditions: SystemConditions()), now: .seconds(11)).contains(launch), "one at a time")
        // Not yet due, or quit by its user: none.
        var others = Self.machine()
        Self.knowing("b", Self.model(.notRunning, tasks: [Self.refresh(at: 50)]), launchable: true, into: &others)
        Self.knowing("c", Self.model(.notRunning, tasks: [Self.refresh(at: 5)]), launchable: true, into: &others)
        _ = others.handle(.app("c", .quitByUser), now: .zero)
        let actions = others.handle(.tick(conditions: SystemConditions()), now: .seconds(10))
        #expect(!actions.contains { if case .app(_, .launch) = $0 { true } else { false } })
    }

    @Test func theHostReadsItsConditionsOnlyWhileWorkWaitsOrRuns() {
        var machine = Self.machine()
        let model = Self.model(.background)
        Self.knowing(model, into: &machine)
        #expect(!machine.needsConditions)
        machine.change("a", now: .zero) { try? $0.model.submit(Self.refresh(at: nil)) }
        #expect(machine.needsConditions)
    }

    // MARK: The device's sleep

    @Test func theWorkThatWakesTheDeviceIsToldBeforeTheAppsRulesAndOnlyWhenItChanges() {
        var machine = Self.machine(followsSleep: true, monitoringInterval: .seconds(60))
        let model = Self.model(.suspended, tasks: [Self.refresh(at: 40)])
        Self.knowing(model, into: &machine)
        let actions = machine.handle(.conditions("a", hasSome: true), now: .seconds(10))
        #expect(
            actions == [
                .openWatch, .wake(.refresh, at: .seconds(40)), .wake(.monitoring, at: .seconds(70)), .sleepRules(Self.rules("a", model)),
                .arm(.seconds(40)),  // its model looks at its work then
            ]
        )
        #expect(machine.handle(.request, now: .seconds(20)).isEmpty)
        // Thawed: its work no longer wakes the device (it runs), its rules change.
        let (_, thawed) = machine.change("a", now: .seconds(20)) { $0.model.resumeByHost() }
        #expect(thawed.filter { if case .lifecycle = $0 { false } else if case .app = $0 { false } else { true } }
            == [.wake(.refresh, at: nil), .wake(.monitoring, at: nil), .sleepRules(Self.rules("a", model))])
    }

    @Test func aResumeTellsTheWakesAfreshAndAnAppThatEndedIsToldOnce() {
        var machine = Self.machine(followsSleep: true, monitoringInterval: .seconds(60))
        let model = Self.model(.suspended, tasks: [Self.refresh(at: nil, power: true)], onBattery: true)
        Self.knowing(model, into: &machine)
        #expect(machine.handle(.request, now: .seconds(10)).first == .wake(.refresh, at: .seconds(10)))  // due now, on power
        #expect(machine.handle(.deviceResumed, now: .seconds(90)).first == .wake(.refresh, at: .seconds(90)))
        let ended = machine.handle(.exited("a"), now: .seconds(91))
        #expect(ended.contains(.sleepRules(Self.rules("a", model))) && model.state == .notRunning)
        #expect(!machine.handle(.request, now: .seconds(92)).contains(.sleepRules(Self.rules("a", model))))
    }

    @Test func aHostThatDoesNotFollowTheSleepTellsItNothing() {
        var machine = Self.machine()
        Self.knowing(Self.model(.suspended, tasks: [Self.refresh(at: 40)]), conditions: true, into: &machine)
        #expect(machine.handle(.serving, now: .zero) == [.openWatch, .arm(.seconds(40))])
    }

    // MARK: Every app's machine

    /// An app's event goes to its own machine, and what that decides comes out as its actions,
    /// before the host's own (the watch, the deadline).
    @Test func anAppsEventGoesToItsMachineAndItsActionsComeOutAsItsOwn() {
        var machine = Self.machine()
        Self.knowing(Self.model(.background), into: &machine)
        _ = machine.handle(.serving, now: .zero)
        let (_, actions) = machine.change("a", now: .zero) { $0.model.suspendByHost() }
        #expect(actions == [.lifecycle("a", .suspended(.frozenByHost)), .app("a", .askBeforeFreezing(generation: 1))])
        #expect(machine.handle(.app("nobody", .saidHello), now: .zero).isEmpty, "no app, no machine")
    }

    /// A fix that wakes a frozen app is decided once: its machine's wake is done to its model
    /// there, and the model's resume decided in the same pass (the waits end, the thaw goes);
    /// the thaw's end, the kernel's word, sends what waited.
    @Test func aFixThatWakesAFrozenAppIsDecidedOnce() {
        var machine = Self.machine()
        let model = Self.model(.background)
        Self.knowing(model, into: &machine)
        _ = machine.handle(.serving, now: .zero)
        machine.change("a", now: .zero) { $0.model.suspendByHost() }
        _ = machine.handle(.app("a", .noticeSettled(generation: 1, answered: true)), now: .zero)
        _ = machine.handle(.app("a", .froze(generation: 1)), now: .zero)
        #expect(machine.apps["a"]?.isFreezeRequested == true)
        let woken = machine.handle(.app("a", .locationEvent(Self.event)), now: .seconds(5))
        #expect(
            woken == [
                .lifecycle("a", .resumed), .app("a", .stopWatching), .app("a", .endWait(.willSuspend)), .app("a", .thaw(generation: 2)),
                .app("a", .reportDelivery(.woken, Self.event)), .arm(.seconds(5) + ExecutionProfile.unlimited.eventBudget),
            ]
        )
        #expect(model.state == .background)
        let thawed = machine.handle(.app("a", .thawed(generation: 2, wasFrozen: true)), now: .seconds(5))
        #expect(thawed == [.app("a", .send([.didResume])), .app("a", .send([Self.event]))])
    }

    /// Processes outside the group: what escaped is killed, then the app; the model's kill is
    /// the machine's, and its end decided in the same pass.
    @Test func anAppKilledForItsEscapesEndsInTheSamePass() {
        var machine = Self.machine()
        let model = Self.model(.background)
        Self.knowing(model, into: &machine)
        let actions = machine.handle(.app("a", .escaped(["4242 (sh) in /"])), now: .zero)
        #expect(actions.prefix(4) == [
            .app("a", .killEscapes), .lifecycle("a", .terminated(.misbehaved("4242 (sh) in /"))), .app("a", .stopWatching), .app("a", .kill),
        ])
        #expect(model.state == .notRunning)
    }

    /// Audio: the model's assertion follows what the app reports and what ALSA shows, either.
    @Test func theModelsAudioFollowsTheReportAndALSA() {
        var machine = Self.machine()
        let model = Self.model(.background, audio: true)
        Self.knowing(model, into: &machine)
        machine.change("a", now: .zero) { app in
            app.reportsAudio = true
            app.followAudio()
        }
        machine.change("a", now: .zero) { app in
            app.observesAudio = true
            app.followAudio()
        }
        #expect(model.audioPlaybackCount == 1)
        machine.change("a", now: .zero) { $0.disconnected() }  // the report ends with the connection
        #expect(model.audioPlaybackCount == 1, "ALSA still shows it playing")
        machine.change("a", now: .zero) { app in
            app.observesAudio = false
            app.followAudio()
        }
        #expect(model.audioPlaybackCount == 0)
    }

    /// A new launch goes on from the last (its budgets, its notices, its scheduled work); one
    /// that fails gives the last launch back (its model too), holding what the failed one held.
    @Test func aLaunchGoesOnFromTheLastAndAFailedOneGivesItBack() {
        var machine = Self.machine()
        let exited = Self.model(.notRunning, tasks: [Self.refresh(at: 500)])
        Self.knowing(exited, launchable: true, into: &machine)
        // An event while it is not running: it is launched for it, the notice waits for its hello.
        let first = machine.handle(.app("a", .locationEvent(Self.event)), now: .zero)
        #expect(first.contains(.app("a", .launch(reason: "location-event"))))
        #expect(machine.apps["a"]?.machine.pending == [Self.event])
        let next = Self.model(.notRunning)  // with the fetch mode, as the last
        let launched = machine.handle(
            .launching("a", next, reason: "location-event", inBackground: true, dataWakes: .data, eventWakes: .events), now: .zero
        )
        #expect(launched.contains(.lifecycle("a", .didFinishLaunching)) && next.state == .active)
        #expect(next.pendingTaskRequests.map(\.identifier) == ["sync"], "its scheduled work goes on")
        #expect(machine.apps["a"]?.machine.pending == [Self.event] && machine.apps["a"]?.machine.isLaunching == false)
        _ = machine.handle(.launchEnded("a", started: false), now: .zero)
        #expect(machine.apps["a"]?.model === exited, "the last launch, its model too")
        #expect(machine.apps["a"]?.machine.isLaunching == false && machine.apps["a"]?.machine.pending == [Self.event])
        let user = Self.model(.notRunning)
        _ = machine.handle(.launching("a", user, reason: nil, inBackground: false, dataWakes: .data, eventWakes: .events), now: .zero)
        _ = machine.handle(.launchEnded("a", started: true), now: .zero)
        #expect(machine.apps["a"]?.isRunning == true && machine.apps["a"]?.machine.entersBackgroundOnHello == false)
    }

    /// A launch that failed before it began (its group could not be made) is told to the
    /// machine the app has, once: its launch is over, its notices kept for the next.
    @Test func aLaunchThatFailedBeforeItBeganIsToldOnceToTheMachineItHas() {
        var machine = Self.machine()
        Self.knowing(Self.model(.notRunning), launchable: true, into: &machine)
        _ = machine.handle(.app("a", .locationEvent(Self.event)), now: .zero)
        #expect(machine.apps["a"]?.machine.isLaunching == true)
        _ = machine.handle(.launchEnded("a", started: false), now: .zero)
        #expect(machine.apps["a"]?.machine.isLaunching == false && machine.apps["a"]?.machine.pending == [Self.event])
    }

    /// A new launch's process is not yet running while its spawn is awaited: due work does not
    /// launch it a second time; once it started, its machine says so.
    @Test func aLaunchUnderWayIsNotLaunchedAgainForItsDueWork() {
        var machine = Self.machine()
        Self.knowing(Self.model(.notRunning, tasks: [Self.refresh(at: nil)]), launchable: true, into: &machine)
        let model = Self.model(.notRunning)
        _ = machine.handle(.launching("a", model, reason: "scheduled-task", inBackground: true, dataWakes: .data, eventWakes: .events), now: .zero)
        #expect(machine.apps["a"]?.machine.isStarting == true && machine.apps["a"]?.mayBeLaunched == false)
        #expect(!machine.handle(.tick(conditions: SystemConditions()), now: .seconds(1)).contains(.app("a", .launch(reason: "scheduled-task"))))
        _ = machine.handle(.launchEnded("a", started: true), now: .seconds(1))
        #expect(machine.apps["a"]?.machine.isStarting == false)
    }
}
