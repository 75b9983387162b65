import FoundationEssentials
import KeepAliveCore
@testable import KeepAliveHostProtocol
import KeepAliveMonitoring
import Testing

/// The host's rules for one app, proven on the machine alone, on a test clock (the facts'
/// `now`): freezing safely, wakes within budgets, notices held and told, launches. The
/// end-to-end suites (HostTests, HostWakeBudgetTests, HostLocationServiceTests...) prove that
/// the host does what it decides to real processes.
@Suite struct HostedAppMachineTests {
    typealias Machine = HostedAppMachine
    typealias Facts = HostedAppMachine.Facts

    static func facts(
        at seconds: Int = 0,
        _ state: AppState = .background,
        running: Bool = true,
        connected: Bool = true,
        freezing: Bool = false,
        launchable: Bool = true
    ) -> Facts {
        Facts(
            now: .seconds(seconds),
            state: state,
            isRunning: running,
            isConnected: connected,
            isFreezeRequested: freezing,
            isLaunchable: launchable
        )
    }

    /// A launch whose process runs (its spawn done).
    static func launched(for reason: String? = nil, inBackground: Bool = false) -> Machine {
        var machine = Machine(launchedFor: reason, inBackground: inBackground, dataWakes: .data, eventWakes: .events)
        _ = machine.handle(.started, facts())
        return machine
    }

    static let event = HostNotice.locationEvent(
        MonitorEvent(identifier: "home", state: .satisfied, date: Date(timeIntervalSince1970: 0), location: Location(latitude: 52.5, longitude: 13.4)),
        received: 1
    )

    // MARK: Freezing

    @Test func aSuspendedAppIsAskedFirstAndFrozenOnceItAnsweredOrItsTimeRanOut() {
        var machine = Self.launched()
        #expect(machine.handle(.model(.suspended(.backgroundTimeExpired)), Self.facts(.suspended)) == [.askBeforeFreezing(generation: 1)])
        #expect(machine.handle(.noticeSettled(generation: 1, answered: false), Self.facts(.suspended)) == [.freeze(generation: 1, answered: false)])
        #expect(machine.handle(.froze(generation: 1), Self.facts(.suspended, freezing: true)) == [.watchWhileFrozen(generation: 1)])
    }

    @Test func aDecisionThatCameDuringTheNoticeWinsOverTheFreeze() {
        var machine = Self.launched()
        _ = machine.handle(.model(.suspended(.backgroundTimeExpired)), Self.facts(.suspended))
        #expect(machine.handle(.model(.resumed), Self.facts(.background)) == [.stopWatching, .endWait(.willSuspend), .thaw(generation: 2)])
        #expect(machine.handle(.noticeSettled(generation: 1, answered: true), Self.facts(.background)).isEmpty)
        // The host stopping overrides a freeze in flight too.
        _ = machine.handle(.model(.suspended(.backgroundTimeExpired)), Self.facts(.suspended))
        _ = machine.handle(.hostStopping, Self.facts(.suspended))
        #expect(machine.handle(.noticeSettled(generation: 3, answered: true), Self.facts(.suspended)).isEmpty)
    }

    @Test func anAppResumedWhileItFrozeIsThawedAtOnceAndToldItResumed() {
        var machine = Self.launched()
        _ = machine.handle(.model(.suspended(.backgroundTimeExpired)), Self.facts(.suspended))
        _ = machine.handle(.noticeSettled(generation: 1, answered: true), Self.facts(.suspended))
        _ = machine.handle(.model(.resumed), Self.facts(.background, freezing: true))
        #expect(machine.handle(.froze(generation: 1), Self.facts(.background, freezing: true)) == [.thaw(generation: 2)])
        #expect(machine.handle(.thawed(generation: 2, wasFrozen: true), Self.facts()) == [.send([.didResume])])
        #expect(machine.handle(.thawed(generation: 1, wasFrozen: true), Self.facts()).isEmpty)  // an older thaw says nothing
    }

    @Test func aFreezeDecidedWhileTheThawBeforeItIsUnderWayWaitsForIt() {
        var machine = Self.launched()
        _ = machine.handle(.model(.suspended(.backgroundTimeExpired)), Self.facts(.suspended))
        _ = machine.handle(.noticeSettled(generation: 1, answered: true), Self.facts(.suspended))
        _ = machine.handle(.froze(generation: 1), Self.facts(.suspended, freezing: true))
        // A scheduled task: thawed; the app runs it and is suspended again before the thaw is done.
        #expect(machine.handle(.model(.resumed), Self.facts(.background, freezing: true)).contains(.thaw(generation: 2)))
        #expect(machine.handle(.model(.suspended(.backgroundTasksEnded)), Self.facts(.suspended, freezing: true)) == [.askBeforeFreezing(generation: 3)])
        #expect(machine.handle(.noticeSettled(generation: 3, answered: true), Self.facts(.suspended, freezing: true)).isEmpty)
        #expect(machine.handle(.thawed(generation: 2, wasFrozen: true), Self.facts(.suspended)) == [.freeze(generation: 3, answered: true)])
        // Once: and a freeze with no thaw under way goes at once.
        #expect(machine.handle(.thawed(generation: 2, wasFrozen: true), Self.facts(.suspended)).isEmpty)
        _ = machine.handle(.model(.suspended(.backgroundTimeExpired)), Self.facts(.suspended))
        #expect(machine.handle(.noticeSettled(generation: 4, answered: nil), Self.facts(.suspended)) == [.freeze(generation: 4, answered: nil)])
    }

    /// A freeze done late (the host loaded): the app was resumed for a task before it was done,
    /// and suspended again once the task ended. In whichever order the two freezes end, the
    /// group stays frozen: a thaw for the older one, done after the newer freeze, left the
    /// suspended app running (HostScheduledWorkTests under ThreadSanitizer beside a busy loop).
    @Test(arguments: [[1, 3], [3, 1]])
    func anOlderFreezeDoneAfterTheNextWasDecidedLeavesTheGroupFrozen(order: [Int]) {
        var machine = Self.launched()
        _ = machine.handle(.model(.suspended(.backgroundTimeExpired)), Self.facts(.suspended))
        #expect(machine.handle(.noticeSettled(generation: 1, answered: true), Self.facts(.suspended)) == [.freeze(generation: 1, answered: true)])
        #expect(machine.handle(.model(.resumed), Self.facts(.background)) == [.stopWatching, .endWait(.willSuspend), .thaw(generation: 2)])
        #expect(machine.handle(.thawed(generation: 2, wasFrozen: false), Self.facts(.background)).isEmpty, "nothing frozen yet")
        #expect(machine.handle(.model(.suspended(.backgroundTasksEnded)), Self.facts(.suspended)) == [.askBeforeFreezing(generation: 3)])
        #expect(machine.handle(.noticeSettled(generation: 3, answered: true), Self.facts(.suspended)) == [.freeze(generation: 3, answered: true)])
        var actions: [HostedAppMachine.Action] = []
        for step in order { actions += machine.handle(.froze(generation: step), Self.facts(.suspended, freezing: true)) }
        #expect(actions == [.watchWhileFrozen(generation: 3)], "no thaw")
    }

    /// The older freeze done before the app answered the next suspension's notice: thawed so
    /// that it can answer (not told it resumed), then frozen once the thaw is done.
    @Test(arguments: [false, true])
    func anOlderFreezeDoneWhileTheNextNoticeWaitsIsThawedForTheAnswer(answeredDuringTheThaw: Bool) {
        var machine = Self.launched()
        _ = machine.handle(.model(.suspended(.backgroundTimeExpired)), Self.facts(.suspended))
        _ = machine.handle(.noticeSettled(generation: 1, answered: true), Self.facts(.suspended))
        _ = machine.handle(.model(.resumed), Self.facts(.background))
        _ = machine.handle(.thawed(generation: 2, wasFrozen: false), Self.facts(.background))
        _ = machine.handle(.model(.suspended(.backgroundTasksEnded)), Self.facts(.suspended))
        #expect(machine.handle(.froze(generation: 1), Self.facts(.suspended, freezing: true)) == [.thaw(generation: 3)])
        if answeredDuringTheThaw {
            #expect(machine.handle(.noticeSettled(generation: 3, answered: true), Self.facts(.suspended, freezing: true)).isEmpty, "waits for the thaw")
            #expect(machine.handle(.thawed(generation: 3, wasFrozen: true), Self.facts(.suspended)) == [.freeze(generation: 3, answered: true)])
        } else {
            #expect(machine.handle(.thawed(generation: 3, wasFrozen: true), Self.facts(.suspended)).isEmpty, "not told it resumed")
            #expect(machine.handle(.noticeSettled(generation: 3, answered: true), Self.facts(.suspended)) == [.freeze(generation: 3, answered: true)])
        }
        #expect(machine.handle(.froze(generation: 3), Self.facts(.suspended, freezing: true)) == [.watchWhileFrozen(generation: 3)])
    }

    /// A freeze waiting for a thaw waits for that thaw's end, not an older one's: the older
    /// thaw ending first once let the freeze go while the newer thaw still wrote the kernel's
    /// files (and, done after, left the app running).
    @Test func aFreezeWaitingForAThawIsNotLetGoByAnOlderThawsEnd() {
        var machine = Self.launched()
        _ = machine.handle(.model(.suspended(.backgroundTimeExpired)), Self.facts(.suspended))
        _ = machine.handle(.noticeSettled(generation: 1, answered: true), Self.facts(.suspended))
        #expect(machine.handle(.model(.resumed), Self.facts(.background)).contains(.thaw(generation: 2)))
        _ = machine.handle(.model(.suspended(.backgroundTasksEnded)), Self.facts(.suspended))
        #expect(machine.handle(.froze(generation: 1), Self.facts(.suspended, freezing: true)) == [.thaw(generation: 3)])
        #expect(machine.handle(.noticeSettled(generation: 3, answered: true), Self.facts(.suspended, freezing: true)).isEmpty)
        #expect(machine.handle(.thawed(generation: 2, wasFrozen: false), Self.facts(.suspended, freezing: true)).isEmpty, "thaw 3 still under way")
        #expect(machine.handle(.thawed(generation: 3, wasFrozen: true), Self.facts(.suspended)) == [.freeze(generation: 3, answered: true)])
    }

    @Test func aFreezeThatCameAfterTheAppWasKilledIsUndone() {
        var machine = Self.launched()
        _ = machine.handle(.model(.suspended(.backgroundTimeExpired)), Self.facts(.suspended))
        #expect(machine.handle(.model(.terminated(.requested)), Self.facts(.notRunning)) == [.stopWatching, .kill])
        #expect(machine.handle(.froze(generation: 1), Self.facts(.notRunning, freezing: true)) == [.thawUnreported])
    }

    @Test func aFrozenGroupThatChangedIsCheckedOnlyWhileThatFreezeHolds() {
        var machine = Self.launched()
        _ = machine.handle(.model(.suspended(.backgroundTimeExpired)), Self.facts(.suspended))
        #expect(machine.handle(.groupChanged(generation: 1), Self.facts(.suspended, freezing: true)) == [.enforceFreeze(generation: 1)])
        _ = machine.handle(.model(.resumed), Self.facts(.background))
        #expect(machine.handle(.groupChanged(generation: 1), Self.facts(.background)).isEmpty)
    }

    /// A check of a frozen group that changed, decided before a wake's thaw, whose freeze ends
    /// after it, must not leave the app frozen.
    @Test func aCheckOfTheFrozenGroupThatFreezesAfterAWakesThawIsUndoneAndTheResumeToldOnce() {
        var machine = Self.launched()
        _ = machine.handle(.model(.suspended(.backgroundTimeExpired)), Self.facts(.suspended))
        _ = machine.handle(.noticeSettled(generation: 1, answered: true), Self.facts(.suspended))
        _ = machine.handle(.froze(generation: 1), Self.facts(.suspended, freezing: true))
        #expect(machine.handle(.groupChanged(generation: 1), Self.facts(.suspended, freezing: true)) == [.enforceFreeze(generation: 1)])
        #expect(machine.handle(.model(.resumed), Self.facts(.background, freezing: true)) == [.stopWatching, .endWait(.willSuspend), .thaw(generation: 2)])
        #expect(machine.handle(.thawed(generation: 2, wasFrozen: true), Self.facts()) == [.send([.didResume])])
        // The check's freeze, ended after the thaw: undone at once, and the app not told twice.
        #expect(machine.handle(.froze(generation: 1), Self.facts(.background, freezing: true)) == [.thaw(generation: 2)])
        #expect(machine.handle(.thawed(generation: 2, wasFrozen: true), Self.facts()).isEmpty)
    }

    @Test func anAppWithAProcessOutsideItsGroupIsKilledWhatEscapedFirst() {
        var machine = Self.launched()
        #expect(
            machine.handle(.escaped(["pid 7 (sh) in /elsewhere"]), Self.facts(.suspended))
                == [.killEscapes, .killModel(.misbehaved("pid 7 (sh) in /elsewhere"))]
        )
        #expect(machine.handle(.escaped(["pid 7 (sh) in /elsewhere"]), Self.facts(.notRunning)).isEmpty)  // killed already
    }

    @Test func conditionsAreWatchedWhileTheAppMayUseThemOrBeLaunchedForThem() {
        var machine = Self.launched()
        #expect(machine.watchesConditions(Self.facts(.background), authorization: .always))
        #expect(!machine.watchesConditions(Self.facts(.background), authorization: .whenInUse))
        #expect(machine.watchesConditions(Self.facts(.inactive), authorization: .whenInUse))
        #expect(machine.watchesConditions(Self.facts(.notRunning, running: false), authorization: .always))  // launched for them
        #expect(!machine.watchesConditions(Self.facts(.notRunning, running: false), authorization: .whenInUse))
        #expect(!machine.watchesConditions(Self.facts(.notRunning, running: false, launchable: false), authorization: .always))
        _ = machine.handle(.quitByUser, Self.facts(.notRunning, running: false))
        #expect(!machine.watchesConditions(Self.facts(.notRunning, running: false), authorization: .always))
        #expect(!machine.watchesConditions(Self.facts(.active), authorization: .denied))
    }

    // MARK: Wakes

    @Test func dataWakesAFrozenAppTwiceAtOnceThenOnceEachTwentyMinutes() {
        var machine = Self.launched()
        var generation = 0
        func frozen(at seconds: Int) -> Facts { Self.facts(at: seconds, .suspended, freezing: true) }
        func suspend(at seconds: Int) {
            _ = machine.handle(.model(.suspended(.backgroundTimeExpired)), frozen(at: seconds))
            generation = machine.generation
        }
        suspend(at: 0)
        #expect(machine.handle(.dataArrived(generation: generation), frozen(at: 0)) == [.stopWatchingSockets, .wakeForEvent, .reportWokenForData])
        suspend(at: 10)
        #expect(machine.handle(.dataArrived(generation: generation), frozen(at: 10)).contains(.wakeForEvent))
        suspend(at: 20)
        // The third within the hour waits for the budget: 20 minutes after the first.
        #expect(machine.handle(.dataArrived(generation: generation), frozen(at: 20)) == [.stopWatchingSockets, .reportPutOff(.data, after: .seconds(1_180))])
        #expect(machine.nextWaitingWake(from: .seconds(20)) == .seconds(1_200))
        #expect(machine.handle(.tick, frozen(at: 1_199)).isEmpty)
        #expect(machine.handle(.tick, frozen(at: 1_200)) == [.wakeForEvent, .reportWokenForData])
        #expect(machine.waitingWakes.isEmpty)
    }

    @Test func dataForAnOlderFreezeOrAnAppThatRunsWakesNothing() {
        var machine = Self.launched()
        _ = machine.handle(.model(.suspended(.backgroundTimeExpired)), Self.facts(.suspended))
        _ = machine.handle(.model(.resumed), Self.facts(.background))
        #expect(machine.handle(.dataArrived(generation: 1), Self.facts(.suspended)).isEmpty)
        #expect(machine.handle(.dataArrived(generation: 2), Self.facts(.background)).isEmpty)
    }

    @Test func aWaitingDataWakeIsDroppedOnceTheAppRunsAndReadsItItself() {
        var machine = Self.launched()
        for seconds in 0..<3 {
            _ = machine.handle(.model(.suspended(.backgroundTimeExpired)), Self.facts(at: seconds, .suspended))
            _ = machine.handle(.dataArrived(generation: machine.generation), Self.facts(at: seconds, .suspended))
        }
        #expect(machine.waitingWakes == [.data])
        #expect(machine.handle(.tick, Self.facts(at: 5, .background)).isEmpty)
        #expect(machine.waitingWakes.isEmpty)
    }

    // MARK: Location events

    @Test func anEventIsToldAtOnceInTheForegroundAndWakesInTheBackground() {
        var machine = Self.launched()
        #expect(machine.handle(.locationEvent(Self.event), Self.facts(.active)) == [.send([Self.event]), .reportDelivery(.told, Self.event)])
        #expect(machine.handle(.locationEvent(Self.event), Self.facts(.background)) == [.wakeForEvent, .send([Self.event]), .reportDelivery(.woken, Self.event)])
        #expect(machine.eventWakes.remaining(at: .zero) == 10)  // a running app's wake costs nothing
    }

    @Test func aFrozenAppIsWokenAndToldAfterItsThaw() {
        var machine = Self.launched()
        _ = machine.handle(.model(.suspended(.backgroundTimeExpired)), Self.facts(.suspended, freezing: true))
        #expect(machine.handle(.locationEvent(Self.event), Self.facts(.suspended, freezing: true)) == [.wakeForEvent, .reportDelivery(.woken, Self.event)])
        #expect(machine.eventWakes.remaining(at: .zero) == 9)
        _ = machine.handle(.model(.resumed), Self.facts(.background, freezing: true))
        #expect(machine.handle(.thawed(generation: 2, wasFrozen: true), Self.facts()) == [.send([.didResume]), .send([Self.event])])
    }

    @Test func anAppNotRunningIsLaunchedOnceTenTimesAtOnceThenItsEventsWait() {
        var machine = Self.launched()
        let notRunning = Self.facts(.notRunning, running: false, connected: false)
        #expect(machine.handle(.locationEvent(Self.event), notRunning) == [.launch(reason: "location-event"), .reportDelivery(.launched, Self.event)])
        // One launch at a time: the next event is held for it.
        #expect(machine.handle(.locationEvent(Self.event), notRunning) == [.reportDelivery(.launched, Self.event)])
        _ = machine.handle(.launchFailed(waiting: machine.pending), notRunning)
        for _ in 2..<10 { _ = machine.handle(.locationEvent(Self.event), notRunning) }
        #expect(machine.handle(.locationEvent(Self.event), notRunning) == [.reportPutOff(.event, after: .seconds(360)), .reportDelivery(.deferred, Self.event)])
        #expect(machine.pending.count == 11)
        _ = machine.handle(.launchFailed(waiting: machine.pending), notRunning)
        #expect(machine.handle(.tick, Self.facts(at: 359, .notRunning, running: false)).isEmpty)
        #expect(machine.handle(.tick, Self.facts(at: 360, .notRunning, running: false)) == [.launch(reason: "location-event")])
    }

    /// The spawn is awaited off the host's executor: until it is done, the launch's process does
    /// not run yet, and its due work does not launch it a second time.
    @Test func aLaunchWhoseSpawnIsUnderWayIsNotLaunchedAgain() {
        var machine = Machine(launchedFor: "scheduled-task", inBackground: true, dataWakes: .data, eventWakes: .events)
        let notRunning = Self.facts(.notRunning, running: false, connected: false)
        #expect(!machine.mayBeLaunched(notRunning))
        #expect(machine.handle(.scheduledWorkDue, notRunning).isEmpty)
        _ = machine.handle(.started, notRunning)
        #expect(machine.mayBeLaunched(notRunning))  // its process ended since: launched again for what is due
        #expect(machine.handle(.scheduledWorkDue, notRunning) == [.launch(reason: "scheduled-task")])
    }

    @Test func anAppTheUserQuitOrTheHostCannotLaunchIsNotLaunched() {
        var quit = Self.launched()
        _ = quit.handle(.quitByUser, Self.facts(.notRunning, running: false))
        #expect(quit.handle(.scheduledWorkDue, Self.facts(.notRunning, running: false)).isEmpty)
        var adopted = Machine(adopted: true, dataWakes: .data, eventWakes: .events)
        #expect(adopted.handle(.scheduledWorkDue, Self.facts(.notRunning, running: false, launchable: false)).isEmpty)
        var recorded = Machine(adopted: false, dataWakes: .data, eventWakes: .events)
        #expect(recorded.handle(.scheduledWorkDue, Self.facts(.notRunning, running: false)) == [.launch(reason: "scheduled-task")])
        // An adopted app whose launch record says its user quit it: not launched once it exits.
        var adoptedQuit = Machine(adopted: true, dataWakes: .data, eventWakes: .events)
        #expect(adoptedQuit.handle(.recordRead(quitByUser: true), Self.facts()).isEmpty)
        #expect(adoptedQuit.handle(.scheduledWorkDue, Self.facts(.notRunning, running: false)).isEmpty)
    }

    @Test func anAdoptedAppThisHostCannotTellIsStoppedAndLaunchedForItsEventOnceGone() {
        var machine = Machine(adopted: true, dataWakes: .data, eventWakes: .events)
        #expect(machine.handle(.locationEvent(Self.event), Self.facts(.active, connected: false)) == [.stopToLaunchAgain, .reportDelivery(.launched, Self.event)])
        #expect(machine.handle(.groupRemoved, Self.facts(.notRunning, running: true)).isEmpty)  // not yet gone
        #expect(machine.handle(.groupRemoved, Self.facts(.notRunning, running: false)) == [.launch(reason: "location-event")])
        #expect(machine.handle(.groupRemoved, Self.facts(.notRunning, running: false)).isEmpty)  // once
    }

    // MARK: Launches

    @Test func aLaunchForAnEventEntersTheBackgroundAfterItsHelloWithTheEventsBudgetAndItsNotices() {
        var machine = Self.launched(for: "location-event", inBackground: true)
        _ = machine.handle(.locationEvent(Self.event), Self.facts(.active, connected: false))
        #expect(machine.handle(.saidHello, Self.facts(.active)) == [.enterBackground(awaitingHandler: true, withEventBudget: true), .send([Self.event])])
        #expect(machine.handle(.noHello, Self.facts(.background)).isEmpty)  // it did say hello
        var silent = Self.launched(for: "scheduled-task", inBackground: true)
        #expect(silent.handle(.noHello, Self.facts(.active, connected: false)) == [.enterBackground(awaitingHandler: false, withEventBudget: false)])
    }

    @Test func aNewLaunchGoesOnWithTheBudgetsAndNoticesButNotTheDataWakesOfTheLastOne() {
        var previous = Self.launched()
        for seconds in 0..<3 {
            _ = previous.handle(.model(.suspended(.backgroundTimeExpired)), Self.facts(at: seconds, .suspended))
            _ = previous.handle(.dataArrived(generation: previous.generation), Self.facts(at: seconds, .suspended))
        }
        _ = previous.handle(.locationEvent(Self.event), Self.facts(at: 3, .suspended, freezing: true))  // held for the thaw
        let next = Machine(launchedFor: "location-event", inBackground: true, dataWakes: .data, eventWakes: .events, continuing: previous)
        _ = previous.handle(.handedOver, Self.facts(.notRunning, running: false))
        #expect(next.dataWakes == previous.dataWakes && next.eventWakes == previous.eventWakes)
        #expect(next.waitingWakes.isEmpty && next.pending == [Self.event] && previous.pending.isEmpty)
    }

    @Test func aScheduledTaskBeginsNoSoonerThanTheEventBudgetAllows() {
        var machine = Self.launched()
        for _ in 0..<10 {
            #expect(machine.nextWake(for: .event, from: .seconds(60)) == .seconds(60))
            #expect(machine.handle(.scheduled(askedFor: .seconds(60)), Self.facts()).isEmpty)
        }
        #expect(machine.nextWake(for: .event, from: .seconds(60)) == .seconds(420))
    }
}
