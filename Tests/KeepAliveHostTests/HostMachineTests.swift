import FoundationEssentials
import KeepAliveCore
@testable import KeepAliveHost
import KeepAliveHostProtocol
import KeepAliveMonitoring
import KeepAliveSleep
import Testing

/// The host's own rules, proven on its machine alone, on plain durations: the watch wanted,
/// the loop's next deadline and when it looks, launches for due work, and what the device's
/// sleep is told. The host's suites (HostMonitoringTests, HostScheduledWorkTests,
/// HostDeviceSleepTests...) prove that the host does what it decides.
@Suite struct HostMachineTests {
    typealias Machine = HostMachine
    typealias App = HostMachine.App

    /// An app in `state`, running unless said otherwise, its exit told by a pidfd, as the host
    /// tells it (what its machine says of it, the machine fills in: an app the machine knows and
    /// may launch, `launchable`, is launched for its due work; `conditions`, watched by its rule).
    static func app(
        _ id: String = "tracker",
        _ state: AppState = .suspended,
        running: Bool? = nil,
        exitTold: Bool = true,
        audio: Bool = false,
        tasks: [BackgroundTaskRequest] = [],
        launchable: Bool = false,
        conditions: Bool = false,
        next: Duration? = nil
    ) -> App {
        App(
            id: id,
            state: state,
            isRunning: running ?? (state != .notRunning),
            isExitTold: exitTold,
            hasAudioMode: audio,
            runsProcessingTask: false,
            runsScheduledTask: false,
            pendingTasks: tasks,
            hasConditions: conditions,
            nextModelEvent: next,
            sleepRules: DeviceSleepMachine.AppRules(app: id, state: state, authorization: .always, backgroundModes: audio ? [.audio] : []),
            facts: HostedAppMachine.Facts(
                now: .zero, state: state, isRunning: running ?? (state != .notRunning), isConnected: true, isFreezeRequested: false,
                isLaunchable: launchable
            )
        )
    }

    /// A machine that knows these apps, as a host that found them at its start.
    static func knowing(_ ids: [String], followsSleep: Bool = false, monitoringInterval: Duration = .seconds(600)) -> Machine {
        var machine = Machine(followsSleep: followsSleep, monitoringInterval: monitoringInterval)
        for id in ids {
            _ = machine.handle(.known(id, HostedAppMachine(adopted: false, dataWakes: .data, eventWakes: .events)), Self.facts([]))
        }
        return machine
    }

    static func facts(at seconds: Int = 0, _ apps: [App], conditions: SystemConditions? = nil) -> HostMachine.Facts {
        HostMachine.Facts(now: .seconds(seconds), apps: apps, housekeepingInterval: .seconds(1), conditions: conditions)
    }

    static func refresh(_ name: String = "sync", at seconds: Int?, power: Bool = false) -> BackgroundTaskRequest {
        BackgroundTaskRequest(identifier: name, earliestBeginDate: seconds.map { .seconds($0) }, requiresExternalPower: power)
    }

    static let never = Duration.seconds(Int64.max / 2)

    // MARK: The watch

    @Test func theWatchIsOpenWhileSomeAppsConditionsAreWatchedAndNotWhileTheDeviceSleeps() {
        var machine = Self.knowing(["tracker", "other", "a", "b", "c"])
        #expect(machine.handle(.changed("tracker", .conditions), Self.facts([Self.app()])) == [.arm(Self.never)])
        let watching = Self.facts([Self.app(conditions: true), Self.app("other")])
        #expect(machine.handle(.changed("tracker", .conditions), watching) == [.openWatch])
        #expect(machine.handle(.changed("tracker", .conditions), watching).isEmpty)  // wanted, and open: nothing to do
        #expect(machine.handle(.deviceWillSleep, watching) == [.closeWatch])
        #expect(machine.handle(.changed("tracker", .conditions), watching).isEmpty)  // asleep: still closed
        #expect(machine.handle(.deviceResumed, watching) == [.openWatch, .arm(Self.never)])
        #expect(machine.handle(.changed("tracker", .conditions), Self.facts([Self.app()])) == [.closeWatch])
    }

    @Test func anotherServiceKeepsTheWatchOpenUntilItNoLongerWantsFixes() {
        var machine = Self.knowing(["tracker", "other", "a", "b", "c"])
        let none = Self.facts([])
        _ = machine.handle(.changed("tracker", .conditions), none)
        #expect(machine.handle(.fixesWanted(true, by: "geoclue"), none) == [.openWatch])
        #expect(machine.handle(.fixesWanted(true, by: "wake"), none).isEmpty)
        #expect(machine.handle(.fixesWanted(false, by: "geoclue"), none).isEmpty)  // the wake still wants them
        #expect(machine.handle(.fixesWanted(false, by: "wake"), none) == [.closeWatch])
    }

    // MARK: The loop's deadline

    @Test func theLoopWakesAtTheEarliestOfTheModelsEventsTheLaunchesAndTheWakesPutOff() {
        var machine = Self.knowing(["tracker", "other", "a", "b", "c"])
        // c's budget allows one wake each 25 s: a second event at once waits for the next.
        let c = Self.app("c", .suspended)
        _ = machine.handle(.known("c", HostedAppMachine(adopted: false, dataWakes: .data, eventWakes: WakeBudget(burst: 1, interval: .seconds(25)))), Self.facts([]))
        for _ in 0..<2 { _ = machine.handle(.app("c", .locationEvent(Self.event), c.facts), Self.facts([c])) }
        let apps = [
            Self.app("a", .background, next: .seconds(30)),
            Self.app("b", .notRunning, tasks: [Self.refresh(at: 20)], launchable: true),
            c,
        ]
        #expect(machine.nextDeadline(Self.facts(at: 10, apps)) == .seconds(20))
        #expect(machine.nextDeadline(Self.facts(at: 10, Array(apps.dropFirst(2)))) == .seconds(25))
        // Work of an app the host may not launch (quit by its user) wakes nothing.
        let quit = Self.app("b", .notRunning, tasks: [Self.refresh(at: 20)], launchable: false)
        #expect(machine.nextDeadline(Self.facts(at: 10, [quit])) == Self.never)
    }

    /// What nothing tells the host of, it looks for every housekeeping interval: an exit no pidfd
    /// tells, audio on ALSA, the power supply, due work waiting on power or a network, due work
    /// of an app to launch. Else it sleeps until told.
    @Test(arguments: [
        (Self.app(exitTold: false), true),
        (Self.app("a", .background, audio: true), true),
        (Self.app("a", .suspended, audio: true), false),  // frozen: it plays nothing
        (Self.app(tasks: [Self.refresh(at: 5, power: true)]), true),
        (Self.app(tasks: [Self.refresh(at: 50, power: true)]), false),  // not due yet
        (Self.app(tasks: [Self.refresh(at: 5)]), false),  // the model runs it on its own clock
        (Self.app("a", .notRunning, tasks: [Self.refresh(at: 5)], launchable: true), true),
        (Self.app(), false),
    ])
    func theHostLooksOnlyForWhatNothingTellsIt(app: App, looks: Bool) {
        let machine = Self.knowing(["tracker", "other", "a", "b", "c"])
        let facts = Self.facts(at: 10, [app])
        #expect(machine.needsLooking(facts) == looks)
        #expect(machine.nextDeadline(facts) == (looks ? .seconds(11) : Self.never))
    }

    @Test func theDeadlineIsArmedWhenItChangesAndAgainAfterEachTick() {
        var machine = Self.knowing(["tracker", "other", "a", "b", "c"])
        let app = Self.app("a", .background, next: .seconds(30))
        #expect(machine.handle(.changed("tracker", .conditions), Self.facts([app])) == [.arm(.seconds(30))])
        #expect(machine.handle(.changed("tracker", .conditions), Self.facts(at: 5, [app])).isEmpty)
        #expect(machine.handle(.tick, Self.facts(at: 30, [app])) == [.arm(.seconds(30))])
        let sooner = Self.app("a", .background, next: .seconds(12))
        #expect(machine.handle(.changed("tracker", .conditions), Self.facts(at: 10, [sooner])) == [.arm(.seconds(12))])
    }

    // MARK: Launches for due work

    @Test func anAppThatExitedIsLaunchedForItsDueWorkOnlyAtATickAndWhenItsConditionsHold() {
        var machine = Self.knowing(["a", "b", "c"])
        let launch = HostMachine.Action.app("a", .launch(reason: "scheduled-task"))
        let exited = Self.app("a", .notRunning, tasks: [Self.refresh(at: 5, power: true)], launchable: true)
        #expect(!machine.handle(.changed("tracker", .conditions), Self.facts(at: 10, [exited])).contains(launch))
        let onBattery = SystemConditions(hasExternalPower: false)
        #expect(!machine.handle(.tick, Self.facts(at: 10, [exited], conditions: onBattery)).contains(launch))
        #expect(machine.handle(.tick, Self.facts(at: 10, [exited], conditions: SystemConditions())).contains(launch))
        #expect(machine.apps["a"]?.isLaunching == true, "its machine took the launch")
        #expect(!machine.handle(.tick, Self.facts(at: 11, [exited], conditions: SystemConditions())).contains(launch), "one at a time")
        // Not yet due, quit by its user, or being launched: none.
        let early = Self.app("a", .notRunning, tasks: [Self.refresh(at: 50)], launchable: true)
        let quit = Self.app("b", .notRunning, tasks: [Self.refresh(at: 5)], launchable: false)
        let launching = Self.app("c", .notRunning, tasks: [Self.refresh(at: 5)], launchable: true)
        _ = machine.handle(.app("c", .scheduledWorkDue, launching.facts), Self.facts(at: 10, [launching]))
        #expect(machine.apps["c"]?.isLaunching == true)
        let actions = machine.handle(.tick, Self.facts(at: 10, [early, quit, launching], conditions: SystemConditions()))
        #expect(!actions.contains { if case .app(_, .launch) = $0 { true } else { false } })
    }

    @Test func theHostReadsItsConditionsOnlyWhileWorkWaitsOrRuns() {
        let machine = Self.knowing(["tracker"])
        #expect(!machine.needsConditions(Self.facts([Self.app()])))
        #expect(machine.needsConditions(Self.facts([Self.app(tasks: [Self.refresh(at: nil)])])))
        var running = Self.app()
        running.runsScheduledTask = true
        #expect(machine.needsConditions(Self.facts([running])))
    }

    // MARK: The device's sleep

    @Test func theWorkThatWakesTheDeviceIsToldBeforeTheAppsRulesAndOnlyWhenItChanges() {
        var machine = Self.knowing(["tracker", "a", "b"], followsSleep: true, monitoringInterval: .seconds(60))
        let frozen = Self.app("a", .suspended, tasks: [Self.refresh(at: 40)], conditions: true)
        let actions = machine.handle(.changed("tracker", .conditions), Self.facts(at: 10, [frozen]))
        #expect(
            actions == [
                .openWatch, .wake(.refresh, at: .seconds(40)), .wake(.monitoring, at: .seconds(70)), .sleepRules(frozen.sleepRules),
                .arm(Self.never),
            ]
        )
        #expect(machine.handle(.changed("tracker", .conditions), Self.facts(at: 20, [frozen])).isEmpty)
        // Thawed: its work no longer wakes the device (it runs), its rules change.
        let running = Self.app("a", .background, tasks: [Self.refresh(at: 40)], conditions: true)
        #expect(
            machine.handle(.changed("tracker", .conditions), Self.facts(at: 20, [running]))
                == [.wake(.refresh, at: nil), .wake(.monitoring, at: nil), .sleepRules(running.sleepRules)]
        )
    }

    @Test func aResumeTellsTheWakesAfreshAndAnAppThatEndedIsToldOnce() {
        var machine = Self.knowing(["tracker", "a", "b"], followsSleep: true, monitoringInterval: .seconds(60))
        let frozen = Self.app("a", .suspended, tasks: [Self.refresh(at: nil)])
        #expect(machine.handle(.changed("tracker", .conditions), Self.facts(at: 10, [frozen])).first == .wake(.refresh, at: .seconds(10)))  // due now
        #expect(machine.handle(.deviceResumed, Self.facts(at: 90, [frozen])).first == .wake(.refresh, at: .seconds(90)))
        let ended = Self.app("a", .notRunning)
        #expect(machine.handle(.changed("tracker", .conditions), Self.facts(at: 91, [ended])).contains(.sleepRules(ended.sleepRules)))
        #expect(!machine.handle(.changed("tracker", .conditions), Self.facts(at: 92, [ended])).contains(.sleepRules(ended.sleepRules)))
    }

    @Test func aHostThatDoesNotFollowTheSleepTellsItNothing() {
        var machine = Self.knowing(["tracker", "other", "a", "b", "c"])
        let frozen = Self.app("a", .suspended, tasks: [Self.refresh(at: 40)], conditions: true)
        #expect(machine.handle(.changed("tracker", .conditions), Self.facts([frozen])) == [.openWatch, .arm(Self.never)])
    }

    // MARK: Every app's machine

    static let event = HostNotice.locationEvent(
        MonitorEvent(identifier: "home", state: .satisfied, date: Date(timeIntervalSince1970: 0), location: Location(latitude: 52.5, longitude: 13.4)),
        received: 1
    )

    /// An app's event goes to its own machine, and what that decides comes out as its actions,
    /// before the host's own (the watch, the deadline).
    @Test func anAppsEventGoesToItsMachineAndItsActionsComeOutAsItsOwn() {
        var machine = Self.knowing(["a"])
        let frozen = Self.app("a", .suspended)
        let actions = machine.handle(.app("a", .model(.suspended(.nothingKeepsItAlive)), frozen.facts), Self.facts([frozen]))
        #expect(actions == [.app("a", .askBeforeFreezing(generation: 1)), .arm(Self.never)])
        #expect(machine.handle(.app("nobody", .saidHello, frozen.facts), Self.facts([frozen])).isEmpty, "no app, no machine")
    }

    /// A new launch goes on from the last (its budgets, its notices); one that fails gives the
    /// last launch's machine back, holding what the failed one held.
    @Test func aLaunchGoesOnFromTheLastAndAFailedOneGivesItBack() {
        var machine = Self.knowing(["a"])
        var exited = Self.app("a", .notRunning, launchable: true)
        exited.facts.isRunning = false
        // An event while it is not running: it is launched for it, the notice waits for its hello.
        let first = machine.handle(.app("a", .locationEvent(Self.event), exited.facts), Self.facts([exited]))
        #expect(first.contains(.app("a", .launch(reason: "location-event"))))
        #expect(machine.apps["a"]?.pending == [Self.event])
        _ = machine.handle(.launching("a", reason: "location-event", inBackground: true, dataWakes: .data, eventWakes: .events), Self.facts([exited]))
        #expect(machine.apps["a"]?.pending == [Self.event] && machine.apps["a"]?.isLaunching == false, "a new launch, its notices kept")
        _ = machine.handle(.launchEnded("a", started: false), Self.facts([exited]))
        #expect(machine.apps["a"]?.isLaunching == false, "the last launch's machine, its launch over")
        #expect(machine.apps["a"]?.pending == [Self.event], "what the failed launch held")
        _ = machine.handle(.launching("a", reason: nil, inBackground: false, dataWakes: .data, eventWakes: .events), Self.facts([exited]))
        _ = machine.handle(.launchEnded("a", started: true), Self.facts([exited]))
        #expect(machine.apps["a"]?.entersBackgroundOnHello == false, "the user's launch: in the foreground")
    }

    /// A launch that failed before it began (its group could not be made) is told to the
    /// machine the app has, once: its launch is over, its notices kept for the next.
    @Test func aLaunchThatFailedBeforeItBeganIsToldOnceToTheMachineItHas() {
        var machine = Self.knowing(["a"])
        var exited = Self.app("a", .notRunning, launchable: true)
        exited.facts.isRunning = false
        _ = machine.handle(.app("a", .locationEvent(Self.event), exited.facts), Self.facts([exited]))
        #expect(machine.apps["a"]?.isLaunching == true)
        _ = machine.handle(.launchEnded("a", started: false), Self.facts([exited]))
        #expect(machine.apps["a"]?.isLaunching == false && machine.apps["a"]?.pending == [Self.event])
    }

    /// A new launch's process is not yet running while its spawn is awaited: due work does not
    /// launch it a second time; once it started, its machine says so.
    @Test func aLaunchUnderWayIsNotLaunchedAgainForItsDueWork() {
        var machine = Self.knowing(["a"])
        var exited = Self.app("a", .notRunning, launchable: true)
        exited.facts.isRunning = false
        _ = machine.handle(.launching("a", reason: "scheduled-task", inBackground: true, dataWakes: .data, eventWakes: .events), Self.facts([exited]))
        #expect(machine.apps["a"]?.isStarting == true)
        #expect(machine.apps["a"]?.mayBeLaunched(exited.facts) == false)
        _ = machine.handle(.launchEnded("a", started: true), Self.facts([exited]))
        #expect(machine.apps["a"]?.isStarting == false)
    }
}
