import KeepAliveCore
@testable import KeepAliveHost
import KeepAliveSleep
import Testing

/// The host's own rules, proven on its machine alone, on plain durations: the watch wanted,
/// the loop's next deadline and when it looks, launches for due work, and what the device's
/// sleep is told. The host's suites (HostMonitoringTests, HostScheduledWorkTests,
/// HostDeviceSleepTests...) prove that the host does what it decides.
@Suite struct HostMachineTests {
    typealias Machine = HostMachine
    typealias App = HostMachine.App

    /// An app in `state`, running unless said otherwise, its exit told by a pidfd.
    static func app(
        _ id: String = "tracker",
        _ state: AppState = .suspended,
        running: Bool? = nil,
        exitTold: Bool = true,
        audio: Bool = false,
        tasks: [BackgroundTaskRequest] = [],
        launchable: Bool = false,
        watches: Bool = false,
        next: Duration? = nil,
        waiting: Duration? = nil
    ) -> App {
        App(
            id: id,
            state: state,
            isRunning: running ?? (state != .notRunning),
            isExitTold: exitTold,
            hasAudioMode: audio,
            runsProcessingTask: false,
            runsScheduledWork: false,
            pendingTasks: tasks,
            mayBeLaunched: launchable,
            isLaunching: false,
            watchesConditions: watches,
            nextModelEvent: next,
            nextWaitingWake: waiting,
            sleepRules: DeviceSleepMachine.AppRules(app: id, state: state, authorization: .always, backgroundModes: audio ? [.audio] : [])
        )
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
        var machine = Machine(followsSleep: false)
        #expect(machine.handle(.changed, Self.facts([Self.app()])) == [.arm(Self.never)])
        let watching = Self.facts([Self.app(watches: true), Self.app("other")])
        #expect(machine.handle(.changed, watching) == [.openWatch])
        #expect(machine.handle(.changed, watching).isEmpty)  // wanted, and open: nothing to do
        #expect(machine.handle(.deviceWillSleep, watching) == [.closeWatch])
        #expect(machine.handle(.changed, watching).isEmpty)  // asleep: still closed
        #expect(machine.handle(.deviceResumed, watching) == [.openWatch, .arm(Self.never)])
        #expect(machine.handle(.changed, Self.facts([Self.app()])) == [.closeWatch])
    }

    @Test func anotherServiceKeepsTheWatchOpenUntilItNoLongerWantsFixes() {
        var machine = Machine(followsSleep: false)
        let none = Self.facts([])
        _ = machine.handle(.changed, none)
        #expect(machine.handle(.fixesWanted(true, by: "geoclue"), none) == [.openWatch])
        #expect(machine.handle(.fixesWanted(true, by: "wake"), none).isEmpty)
        #expect(machine.handle(.fixesWanted(false, by: "geoclue"), none).isEmpty)  // the wake still wants them
        #expect(machine.handle(.fixesWanted(false, by: "wake"), none) == [.closeWatch])
    }

    // MARK: The loop's deadline

    @Test func theLoopWakesAtTheEarliestOfTheModelsEventsTheLaunchesAndTheWakesPutOff() {
        let machine = Machine(followsSleep: false)
        let apps = [
            Self.app("a", .background, next: .seconds(30)),
            Self.app("b", .notRunning, tasks: [Self.refresh(at: 20)], launchable: true),
            Self.app("c", .suspended, waiting: .seconds(25)),
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
        let machine = Machine(followsSleep: false)
        let facts = Self.facts(at: 10, [app])
        #expect(machine.needsLooking(facts) == looks)
        #expect(machine.nextDeadline(facts) == (looks ? .seconds(11) : Self.never))
    }

    @Test func theDeadlineIsArmedWhenItChangesAndAgainAfterEachTick() {
        var machine = Machine(followsSleep: false)
        let app = Self.app("a", .background, next: .seconds(30))
        #expect(machine.handle(.changed, Self.facts([app])) == [.arm(.seconds(30))])
        #expect(machine.handle(.changed, Self.facts(at: 5, [app])).isEmpty)
        #expect(machine.handle(.tick, Self.facts(at: 30, [app])) == [.arm(.seconds(30))])
        let sooner = Self.app("a", .background, next: .seconds(12))
        #expect(machine.handle(.changed, Self.facts(at: 10, [sooner])) == [.arm(.seconds(12))])
    }

    // MARK: Launches for due work

    @Test func anAppThatExitedIsLaunchedForItsDueWorkOnlyAtATickAndWhenItsConditionsHold() {
        var machine = Machine(followsSleep: false)
        let exited = Self.app("a", .notRunning, tasks: [Self.refresh(at: 5, power: true)], launchable: true)
        #expect(!machine.handle(.changed, Self.facts(at: 10, [exited])).contains(.launchForDueWork("a")))
        let onBattery = SystemConditions(hasExternalPower: false)
        #expect(!machine.handle(.tick, Self.facts(at: 10, [exited], conditions: onBattery)).contains(.launchForDueWork("a")))
        #expect(machine.handle(.tick, Self.facts(at: 10, [exited], conditions: SystemConditions())).contains(.launchForDueWork("a")))
        // Not yet due, quit by its user, or being launched: none.
        let early = Self.app("a", .notRunning, tasks: [Self.refresh(at: 50)], launchable: true)
        let quit = Self.app("b", .notRunning, tasks: [Self.refresh(at: 5)], launchable: false)
        var launching = Self.app("c", .notRunning, tasks: [Self.refresh(at: 5)], launchable: true)
        launching.isLaunching = true
        let actions = machine.handle(.tick, Self.facts(at: 10, [early, quit, launching], conditions: SystemConditions()))
        #expect(!actions.contains { if case .launchForDueWork = $0 { true } else { false } })
    }

    @Test func theHostReadsItsConditionsOnlyWhileWorkWaitsOrRuns() {
        #expect(!Machine.needsConditions([Self.app()]))
        #expect(Machine.needsConditions([Self.app(tasks: [Self.refresh(at: nil)])]))
        var running = Self.app()
        running.runsScheduledWork = true
        #expect(Machine.needsConditions([running]))
    }

    // MARK: The device's sleep

    @Test func theWorkThatWakesTheDeviceIsToldBeforeTheAppsRulesAndOnlyWhenItChanges() {
        var machine = Machine(followsSleep: true, monitoringInterval: .seconds(60))
        let frozen = Self.app("a", .suspended, tasks: [Self.refresh(at: 40)], watches: true)
        let actions = machine.handle(.changed, Self.facts(at: 10, [frozen]))
        #expect(
            actions == [
                .openWatch, .wake(.refresh, at: .seconds(40)), .wake(.monitoring, at: .seconds(70)), .sleepRules(frozen.sleepRules),
                .arm(Self.never),
            ]
        )
        #expect(machine.handle(.changed, Self.facts(at: 20, [frozen])).isEmpty)
        // Thawed: its work no longer wakes the device (it runs), its rules change.
        let running = Self.app("a", .background, tasks: [Self.refresh(at: 40)], watches: true)
        #expect(
            machine.handle(.changed, Self.facts(at: 20, [running]))
                == [.wake(.refresh, at: nil), .wake(.monitoring, at: nil), .sleepRules(running.sleepRules)]
        )
    }

    @Test func aResumeTellsTheWakesAfreshAndAnAppThatEndedIsToldOnce() {
        var machine = Machine(followsSleep: true, monitoringInterval: .seconds(60))
        let frozen = Self.app("a", .suspended, tasks: [Self.refresh(at: nil)])
        #expect(machine.handle(.changed, Self.facts(at: 10, [frozen])).first == .wake(.refresh, at: .seconds(10)))  // due now
        #expect(machine.handle(.deviceResumed, Self.facts(at: 90, [frozen])).first == .wake(.refresh, at: .seconds(90)))
        let ended = Self.app("a", .notRunning)
        #expect(machine.handle(.changed, Self.facts(at: 91, [ended])).contains(.sleepRules(ended.sleepRules)))
        #expect(!machine.handle(.changed, Self.facts(at: 92, [ended])).contains(.sleepRules(ended.sleepRules)))
    }

    @Test func aHostThatDoesNotFollowTheSleepTellsItNothing() {
        var machine = Machine(followsSleep: false)
        let frozen = Self.app("a", .suspended, tasks: [Self.refresh(at: 40)], watches: true)
        #expect(machine.handle(.changed, Self.facts([frozen])) == [.openWatch, .arm(Self.never)])
    }
}
