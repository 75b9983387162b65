import KeepAliveCore
import KeepAliveSleep
import Testing

/// The device's sleep under the model's rules, on plain boot-clock durations: which lock is
/// held when, what a sleep and a resume do, and when the rules wake the device.
struct DeviceSleepMachineTests {
    private func seconds(_ value: Int) -> Duration { .seconds(value) }

    private func started(_ options: DeviceSleepMachine.Options = .init()) -> DeviceSleepMachine {
        var machine = DeviceSleepMachine(options: options)
        #expect(machine.handle(.started(now: .zero)) == [.takeDelayLock])
        return machine
    }

    /// Asks for a wake for an app suspended with always, sleeps at 1 s and resumes at
    /// `resumed`: the resume's actions.
    private func sleep(
        _ machine: inout DeviceSleepMachine, wakingFor kind: WakeKind, at due: Duration, resumedAt resumed: Duration
    ) -> [DeviceSleepMachine.Action] {
        _ = machine.handle(.app(.init(state: .suspended, authorization: .always), now: .zero))
        _ = machine.handle(.wake(kind, at: due, now: .zero))
        _ = machine.handle(.sleepAnnounced(now: seconds(1)))
        _ = machine.handle(.prepared(now: seconds(1)))
        return machine.handle(.resumed(now: resumed))
    }

    private func holds(_ actions: [DeviceSleepMachine.Action]) -> Bool? {
        for action in actions.reversed() {
            if case .holdAwake = action { return true }
            if case .letSleep = action { return false }
        }
        return nil
    }

    @Test func alwaysHoldsTheDeviceAwakeWhileTheAppRunsAndReleasesItWhenTheModelSuspendsIt() {
        var machine = started()
        #expect(holds(machine.handle(.app(.init(state: .background, authorization: .always), now: seconds(1)))) == true)
        #expect(machine.heldFor == "location always")
        // A session going inactive changes nothing for always.
        #expect(holds(machine.handle(.session(.inactive, now: seconds(2)))) == nil)
        #expect(
            machine.handle(.app(.init(state: .suspended, authorization: .always), now: seconds(3)))
                == [.letSleep(reason: "the model suspended the app")]
        )
        #expect(machine.heldFor == nil)
    }

    @Test func whenInUseIsNeverHeldAwakeOnceTheSessionIsInactive() {
        var machine = started()
        _ = machine.handle(.session(.active, now: .zero))
        #expect(holds(machine.handle(.app(.init(state: .background, authorization: .whenInUse), now: seconds(1)))) == true)
        #expect(
            machine.handle(.session(.inactive, now: seconds(2)))
                == [.say(.session(.inactive)), .letSleep(reason: "the session is inactive (when-in-use)")]
        )
        // The model still lets the app run (its background task), but not the device awake.
        #expect(machine.handle(.app(.init(state: .background, authorization: .whenInUse), now: seconds(3))).isEmpty)
        #expect(holds(machine.handle(.session(.active, now: seconds(4)))) == true)
    }

    @Test func aHeadlessDeviceFollowsTheModelAlone() {
        var machine = started()
        #expect(holds(machine.handle(.app(.init(state: .background, authorization: .whenInUse), now: .zero))) == true)
        #expect(machine.heldFor == "when-in-use while the app runs, session none")
        #expect(holds(machine.handle(.app(.init(state: .suspended, authorization: .whenInUse), now: seconds(30)))) == false)
    }

    @Test func alwaysWithoutTheLocationModeIsHeldOnlyAsWhenInUse() {
        var machine = started()
        _ = machine.handle(.session(.active, now: .zero))
        #expect(
            machine.handle(.app(.init(state: .background, authorization: .always, backgroundModes: [.audio]), now: seconds(1)))
                == [.holdAwake(reason: "always while the app runs, session active")]
        )
        #expect(holds(machine.handle(.session(.inactive, now: seconds(2)))) == false)
        #expect(holds(machine.handle(.app(.init(state: .background, authorization: .always), now: seconds(3)))) == true)
        #expect(machine.heldFor == "location always")
    }

    @Test func aHostHoldsOneLockForTheAppsItsRulesLetRunAndNamesThem() {
        var machine = started()
        _ = machine.handle(.session(.active, now: .zero))
        let tracker = DeviceSleepMachine.AppRules(app: "tracker", state: .background, authorization: .always)
        let logger = DeviceSleepMachine.AppRules(app: "logger", state: .background, authorization: .whenInUse, backgroundModes: [.audio])
        #expect(machine.handle(.app(tracker, now: seconds(1))) == [.holdAwake(reason: "tracker: location always")])
        // A second app: the same lock, its reason naming both.
        #expect(
            machine.handle(.app(logger, now: seconds(2)))
                == [.holdAwake(reason: "logger: when-in-use while it runs, session active; tracker: location always")]
        )
        var frozen = tracker
        frozen.state = .suspended
        #expect(machine.handle(.app(frozen, now: seconds(3))) == [.holdAwake(reason: "logger: when-in-use while it runs, session active")])
        // The last one the rules let run stops: the lock goes, with what it became.
        var gone = logger
        gone.state = .notRunning
        #expect(machine.handle(.app(gone, now: seconds(4))) == [.letSleep(reason: "logger is not running")])
        #expect(machine.heldFor == nil)
    }

    @Test func theStationaryPauseAndAnOptOutReleaseTheLock() {
        var machine = started()
        _ = machine.handle(.app(.init(state: .background, authorization: .always), now: .zero))
        #expect(
            machine.handle(.app(.init(state: .background, authorization: .always, isStationary: true), now: seconds(1)))
                == [.letSleep(reason: "the app is stationary")]
        )
        var never = DeviceSleepMachine.Options()
        never.holdsAwake = false
        var optedOut = started(never)
        #expect(optedOut.handle(.app(.init(state: .background, authorization: .always), now: .zero)).isEmpty)
        #expect(optedOut.heldFor == nil)
        // A wake's work is held all the same.
        _ = optedOut.handle(.wake(.poll, at: seconds(30), now: .zero))
        _ = optedOut.handle(.sleepAnnounced(now: seconds(1)))
        _ = optedOut.handle(.prepared(now: seconds(1)))
        #expect(optedOut.handle(.resumed(now: seconds(30))).contains(.holdAwake(reason: "woken for poll")))
    }

    @Test func aSleepIsPreparedForAndTheDelayLockReleasedOnlyAfter() {
        var machine = started()
        _ = machine.handle(.app(.init(state: .background, authorization: .always), now: .zero))
        #expect(
            machine.handle(.sleepAnnounced(now: seconds(100)))
                == [
                    .say(.sleepAnnounced(heldFor: "location always")),
                    .letSleep(reason: "the device goes to sleep"),
                    .prepare(within: seconds(4)),
                    .scheduleTimer(at: seconds(104)),
                ]
        )
        // No lock is taken again while preparing, whatever the model says.
        #expect(machine.handle(.app(.init(state: .active, authorization: .always), now: seconds(101))).isEmpty)
        #expect(machine.handle(.prepared(now: seconds(102))) == [.releaseDelayLock])
        #expect(machine.handle(.timerFired(now: seconds(104))).isEmpty)  // already prepared
        #expect(
            machine.handle(.resumed(now: seconds(160)))
                == [
                    .holdAwake(reason: "location always"),
                    .takeDelayLock, .resume(asleep: seconds(58)), .say(.resumed(asleep: seconds(58))),
                ]
        )
    }

    @Test func aSleepThatDidNotWaitForThePreparationIsStillWokenForItsWork() {
        var machine = started()
        _ = machine.handle(.app(.init(state: .suspended, authorization: .always), now: .zero))
        #expect(machine.handle(.wake(.refresh, at: seconds(60), now: .zero)).contains(.armAlarm(at: seconds(60), for: .refresh)))
        _ = machine.handle(.sleepAnnounced(now: seconds(10)))
        #expect(machine.armed == DeviceSleepMachine.Alarm(kind: .refresh, at: seconds(60)), "armed before the announcement, kept")
        // logind suspended before `prepared` came (its delay shorter than the preparation): the
        // alarm armed at the announcement woke the device, for the refresh.
        let resumed = machine.handle(.resumed(now: seconds(60)))
        #expect(resumed.contains(.say(.woke(.refresh, late: .zero))))
        #expect(resumed.contains(.runWork(.refresh)))
        #expect(machine.handle(.prepared(now: seconds(61))).isEmpty, "a late preparation's end changes nothing")
    }

    @Test func theAlarmIsArmedAsSoonAsTheWorksTimeIsKnownWhoeverSuspendsTheDevice() {
        var machine = started()
        _ = machine.handle(.app(.init(state: .suspended, authorization: .always), now: .zero))
        #expect(
            machine.handle(.wake(.refresh, at: seconds(200), now: .zero))
                == [.armAlarm(at: seconds(200), for: .refresh), .say(.alarmArmed(.refresh, in: seconds(200))), .scheduleTimer(at: seconds(200))]
        )
        #expect(machine.handle(.wake(.refresh, at: seconds(200), now: seconds(1))).isEmpty, "armed already")
        #expect(machine.handle(.wake(.refresh, at: nil, now: seconds(2))) == [.disarmAlarm])
        // Due within the shortest sleep: armed at once 5 s ahead (a suspend straight to the
        // kernel may come before its time), run at its time if the device is still awake, and
        // armed again with its lead if a sleep is announced before.
        #expect(
            machine.handle(.wake(.poll, at: seconds(4), now: seconds(3)))
                == [.armAlarm(at: seconds(8), for: .poll), .say(.alarmArmed(.poll, in: seconds(5))), .scheduleTimer(at: seconds(4))]
        )
        var announced = machine
        #expect(announced.handle(.sleepAnnounced(now: .milliseconds(3_500))).contains(.armAlarm(at: .milliseconds(8_500), for: .poll)))
        #expect(machine.handle(.timerFired(now: seconds(4))).contains(.runWork(.poll)))
        // The poll wakes the device only with always: a change of authorization moves the alarm.
        var awake = started()
        _ = awake.handle(.wake(.poll, at: seconds(600), now: .zero))
        #expect(
            awake.handle(.app(.init(state: .suspended, authorization: .always), now: seconds(1)))
                == [.armAlarm(at: seconds(600), for: .poll), .say(.alarmArmed(.poll, in: seconds(599))), .scheduleTimer(at: seconds(600))]
        )
        #expect(awake.handle(.app(.init(state: .suspended, authorization: .whenInUse), now: seconds(2))) == [.disarmAlarm])
    }

    @Test func workToldDuringASleepsPreparationOrAfterItIsArmedForAtOnce() {
        // Told while the sleep is prepared (a loaded host reports its app's task late).
        var preparing = started()
        _ = preparing.handle(.app(.init(state: .suspended, authorization: .always), now: .zero))
        #expect(!preparing.handle(.sleepAnnounced(now: seconds(10))).contains { if case .armAlarm = $0 { true } else { false } })
        #expect(
            preparing.handle(.wake(.refresh, at: seconds(100), now: seconds(11)))
                == [.armAlarm(at: seconds(100), for: .refresh), .say(.alarmArmed(.refresh, in: seconds(89)))]
        )
        #expect(preparing.handle(.prepared(now: seconds(12))) == [.releaseDelayLock, .scheduleTimer(at: seconds(100))], "armed already")
        #expect(preparing.handle(.resumed(now: seconds(100))).contains(.runWork(.refresh)))
        // Told after the preparation, before the kernel suspended: the same.
        var prepared = started()
        _ = prepared.handle(.sleepAnnounced(now: seconds(10)))
        _ = prepared.handle(.prepared(now: seconds(11)))
        #expect(prepared.handle(.wake(.monitoring, at: seconds(12), now: seconds(12))).contains(.armAlarm(at: seconds(17), for: .monitoring)))
        #expect(prepared.handle(.resumed(now: seconds(17))).contains(.runWork(.monitoring)))
    }

    @Test func anAlarmThatExpiresBeforeTheKernelSuspendsIsArmedAgainAndItsWakeDoesTheWork() {
        // A loaded system: the preparation is done at 11 s, but the kernel suspends only at
        // 19 s, after the alarm's time (16 s). Expired while awake, that alarm wakes nothing.
        var machine = started()
        _ = machine.handle(.app(.init(state: .suspended, authorization: .always), now: .zero))
        _ = machine.handle(.wake(.refresh, at: seconds(12), now: .zero))
        // One timer: the preparation's bound (14 s) first, then the alarm's time.
        #expect(machine.handle(.sleepAnnounced(now: seconds(10))).contains(.scheduleTimer(at: seconds(14))))
        #expect(machine.handle(.prepared(now: seconds(11))).contains(.scheduleTimer(at: seconds(16))))
        #expect(machine.handle(.timerFired(now: seconds(14))).isEmpty, "the preparation's timer: already prepared")
        #expect(
            machine.handle(.timerFired(now: seconds(16)))
                == [.armAlarm(at: seconds(21), for: .refresh), .say(.alarmArmed(.refresh, in: seconds(5))), .scheduleTimer(at: seconds(21))]
        )
        #expect(machine.handle(.timerFired(now: seconds(20))).isEmpty, "the alarm armed again is not yet due")
        // Suspended at 19 s and woken by the alarm armed again: the refresh's wake, 5 s late.
        let resumed = machine.handle(.resumed(now: seconds(21)))
        #expect(resumed.contains(.say(.woke(.refresh, late: seconds(5)))))
        #expect(resumed.contains(.runWork(.refresh)))
    }

    @Test func aPreparationThatTakesTooLongIsCutAtItsBound() {
        var machine = started()
        _ = machine.handle(.sleepAnnounced(now: seconds(10)))
        #expect(machine.handle(.timerFired(now: seconds(13))).isEmpty)
        #expect(machine.handle(.timerFired(now: seconds(14))) == [.releaseDelayLock])
        #expect(machine.handle(.prepared(now: seconds(15))).isEmpty)
    }

    @Test func aWakeIsArmedForTheEarliestWorkItsBudgetAllowsAndHoldsTheDeviceForItsFix() {
        var machine = started()
        _ = machine.handle(.app(.init(state: .suspended, authorization: .always), now: .zero))
        _ = machine.handle(.wake(.monitoring, at: seconds(300), now: .zero))
        _ = machine.handle(.wake(.refresh, at: seconds(200), now: .zero))
        // Armed as soon as the work's time was known: the announcement keeps it (logind may not
        // wait for the preparation).
        #expect(machine.armed == DeviceSleepMachine.Alarm(kind: .refresh, at: seconds(200)))
        #expect(
            machine.handle(.sleepAnnounced(now: seconds(10)))
                == [.say(.sleepAnnounced(heldFor: nil)), .prepare(within: seconds(4)), .scheduleTimer(at: seconds(14))]
        )
        #expect(machine.handle(.prepared(now: seconds(11))) == [.releaseDelayLock, .scheduleTimer(at: seconds(200))])
        #expect(
            machine.handle(.resumed(now: seconds(201)))
                == [
                    // Held first: the device may be suspended again within seconds.
                    .disarmAlarm, .holdAwake(reason: "woken for refresh"),
                    .takeDelayLock, .resume(asleep: seconds(190)), .say(.resumed(asleep: seconds(190))),
                    .say(.woke(.refresh, late: seconds(1))), .runWork(.refresh),
                    // The next work's alarm armed at once, whoever suspends the device next.
                    .armAlarm(at: seconds(300), for: .monitoring), .say(.alarmArmed(.monitoring, in: seconds(99))),
                    .scheduleTimer(at: seconds(246)),
                ]
        )
        #expect(machine.handle(.fixArrived(now: seconds(230))) == [.deliverNow])
        #expect(
            machine.handle(.workDone(now: seconds(231)))
                == [
                    .say(.workEnded(.refresh, timedOut: false)), .letSleep(reason: "done: woken for refresh"), .scheduleTimer(at: seconds(300)),
                    .sleepAgain(wokeAt: seconds(201)),
                ]
        )
        // The refresh is spent; the monitoring check is next.
        #expect(machine.nextWake(of: .refresh, from: seconds(231)) == nil)
        #expect(machine.nextWake(of: .monitoring, from: seconds(231)) == seconds(300))
    }

    @Test func workDueWhileItsBudgetIsSpentWaitsForTheBudget() {
        var machine = started()
        #expect(sleep(&machine, wakingFor: .poll, at: seconds(60), resumedAt: seconds(60)).contains(.runWork(.poll)))
        _ = machine.handle(.timerFired(now: seconds(105)))  // no fix in 45 s: deliver, then sleep
        _ = machine.handle(.timerFired(now: seconds(109)))
        // The next poll is due 10 s later, but a poll may wake the device once each 10 minutes.
        #expect(machine.handle(.wake(.poll, at: seconds(120), now: seconds(110))).contains(.armAlarm(at: seconds(660), for: .poll)))
        #expect(machine.nextWake(of: .poll, from: seconds(110)) == seconds(660))
        _ = machine.handle(.sleepAnnounced(now: seconds(111)))
        #expect(machine.armed == DeviceSleepMachine.Alarm(kind: .poll, at: seconds(660)))
    }

    @Test func periodicWorkIsDueFromTheStartAndAgainAfterEachWakeAndThePollOnlyWithAlways() {
        var options = DeviceSleepMachine.Options()
        options.every = [.poll: seconds(10), .monitoring: seconds(120)]
        var machine = DeviceSleepMachine(options: options)
        _ = machine.handle(.started(now: seconds(100)))
        _ = machine.handle(.app(.init(state: .suspended, authorization: .whenInUse), now: seconds(100)))
        // When in use: the poll never wakes the device; the monitoring check does.
        #expect(machine.armed == DeviceSleepMachine.Alarm(kind: .monitoring, at: seconds(220)))
        _ = machine.handle(.sleepAnnounced(now: seconds(101)))
        _ = machine.handle(.prepared(now: seconds(101)))
        #expect(machine.handle(.resumed(now: seconds(220))).contains(.runWork(.monitoring)))
        #expect(machine.nextWake(of: .monitoring, from: seconds(220)) == seconds(520))  // 120 s after, but its budget: 5 min
        _ = machine.handle(.fixArrived(now: seconds(230)))
        _ = machine.handle(.workDone(now: seconds(231)))
        _ = machine.handle(.app(.init(state: .suspended, authorization: .always), now: seconds(232)))
        // Due: the shortest sleep from the announcement, and again from the end of a preparation
        // that took 3 s (the kernel refuses an alarm due within 2 s of the suspend).
        #expect(machine.handle(.sleepAnnounced(now: seconds(233))).contains(.armAlarm(at: seconds(238), for: .poll)))
        #expect(
            machine.handle(.prepared(now: seconds(236)))
                == [.armAlarm(at: seconds(241), for: .poll), .say(.alarmArmed(.poll, in: seconds(5))), .releaseDelayLock, .scheduleTimer(at: seconds(241))]
        )
    }

    @Test func aWakeWithNoFixDeliversWhatItHasAndLetsTheDeviceSleep() {
        var machine = started()
        #expect(sleep(&machine, wakingFor: .monitoring, at: seconds(50), resumedAt: seconds(50)).contains(.runWork(.monitoring)))
        #expect(
            machine.handle(.timerFired(now: seconds(95)))
                == [.say(.noFix(.monitoring, waited: seconds(45))), .deliverNow, .scheduleTimer(at: seconds(99))]
        )
        #expect(machine.heldFor == "woken for monitoring")
        #expect(
            machine.handle(.timerFired(now: seconds(99)))
                == [.say(.workEnded(.monitoring, timedOut: true)), .letSleep(reason: "done: woken for monitoring"), .sleepAgain(wokeAt: seconds(50))]
        )
    }

    @Test func aWakeWhoseWorkGaveUpOnItsFixEarlyLetsTheDeviceSleepThen() {
        var machine = started()
        #expect(sleep(&machine, wakingFor: .poll, at: seconds(50), resumedAt: seconds(50)).contains(.runWork(.poll)))
        // The work's wait followed a hot start (6 s), not the machine's 45 s.
        #expect(
            machine.handle(.fixGivenUp(now: seconds(56)))
                == [.say(.noFix(.poll, waited: seconds(6))), .deliverNow, .scheduleTimer(at: seconds(60))]
        )
        #expect(
            machine.handle(.workDone(now: seconds(57)))
                == [.say(.workEnded(.poll, timedOut: false)), .letSleep(reason: "done: woken for poll"), .sleepAgain(wokeAt: seconds(50))]
        )
        #expect(machine.handle(.fixGivenUp(now: seconds(58))).isEmpty, "not working: nothing")
    }

    @Test func aResumeBeforeTheAlarmsTimeIsNotAWake() {
        var machine = started()
        let actions = sleep(&machine, wakingFor: .refresh, at: seconds(900), resumedAt: seconds(300))  // the lid opened
        #expect(actions.contains(.say(.resumed(asleep: seconds(299)))))
        #expect(!actions.contains(.runWork(.refresh)))
        #expect(machine.nextWake(of: .refresh, from: seconds(300)) == seconds(900))
    }

    @Test func aSleepAnnouncedDuringAWakeOverridesItsWork() {
        var machine = started()
        #expect(sleep(&machine, wakingFor: .poll, at: seconds(20), resumedAt: seconds(20)).contains(.runWork(.poll)))
        let actions = machine.handle(.sleepAnnounced(now: seconds(25)))
        #expect(actions.contains(.letSleep(reason: "the device goes to sleep")))
        #expect(machine.heldFor == nil)
        #expect(machine.handle(.fixArrived(now: seconds(26))).isEmpty)
    }

    @Test func aWakesWorkCutShortByASleepStaysDueAndItsWakeIsNotCounted() {
        var machine = started()
        // A refresh may wake the device once in 15 minutes; it woke it at 200 s.
        #expect(sleep(&machine, wakingFor: .refresh, at: seconds(200), resumedAt: seconds(200)).contains(.runWork(.refresh)))
        #expect(machine.nextWake(of: .refresh, from: seconds(200)) == nil, "spent: no refresh due")
        // Suspended by someone else 6 s later, before the app's task was done: the refresh is
        // due again at the shortest sleep, not 15 minutes on.
        let actions = machine.handle(.sleepAnnounced(now: seconds(206)))
        #expect(Array(actions.prefix(2)) == [.say(.workInterrupted(.refresh)), .say(.sleepAnnounced(heldFor: "woken for refresh"))])
        #expect(actions.contains(.armAlarm(at: seconds(211), for: .refresh)))
        _ = machine.handle(.prepared(now: seconds(207)))
        let resumed = machine.handle(.resumed(now: seconds(211)))
        #expect(resumed.contains(.runWork(.refresh)))
        // Done this time: spent, and a later sleep is not woken for it.
        _ = machine.handle(.fixArrived(now: seconds(215)))
        _ = machine.handle(.workDone(now: seconds(216)))
        #expect(!machine.handle(.sleepAnnounced(now: seconds(220))).contains { if case .armAlarm = $0 { true } else { false } })
        #expect(machine.nextWake(of: .refresh, from: seconds(220)) == nil)
    }

    @Test func aWakeWhoseFixArrivedIsNotRepeatedWhenASleepCutsItsDelivery() {
        var machine = started()
        _ = sleep(&machine, wakingFor: .refresh, at: seconds(200), resumedAt: seconds(200))
        #expect(machine.handle(.fixArrived(now: seconds(203))) == [.deliverNow])
        let actions = machine.handle(.sleepAnnounced(now: seconds(204)))
        #expect(!actions.contains(.say(.workInterrupted(.refresh))))
        #expect(!actions.contains { if case .armAlarm = $0 { true } else { false } })
    }

    // MARK: Sleeps nobody announced

    @Test func aSleepNobodyAnnouncedIsToldAsAGapAndTheWatchAndDeliveryResume() {
        var machine = started()
        #expect(machine.handle(.timeAsleep(total: seconds(3), now: seconds(1))).isEmpty, "the first reading is the baseline")
        _ = machine.handle(.app(.init(state: .background, authorization: .always), now: seconds(2)))
        #expect(machine.heldFor == "location always")
        // `rtcwake -m mem -s 40` at 10 s, straight to the kernel: read at the resume.
        let resumed = machine.handle(.timeAsleep(total: seconds(43), now: seconds(51)))
        #expect(resumed == [.resume(asleep: seconds(40)), .say(.sleptUnannounced(asleep: seconds(40)))])
        #expect(!resumed.contains(.takeDelayLock), "no preparation released the delay lock")
        #expect(machine.heldFor == "location always", "the rules still hold the device")
        // A clock set (the wall clock jumped, the time asleep did not grow), or a blink shorter
        // than the minimum, is no sleep.
        #expect(machine.handle(.timeAsleep(total: seconds(43), now: seconds(60))).isEmpty)
        #expect(machine.handle(.timeAsleep(total: seconds(43) + .milliseconds(900), now: seconds(61))).isEmpty)
    }

    @Test func aSleepNobodyAnnouncedEndedByOurAlarmIsAWakeForItsWork() {
        var machine = started()
        _ = machine.handle(.timeAsleep(total: .zero, now: .zero))
        _ = machine.handle(.app(.init(state: .suspended, authorization: .always), now: .zero))
        #expect(machine.handle(.wake(.refresh, at: seconds(200), now: .zero)).contains(.armAlarm(at: seconds(200), for: .refresh)))
        // Suspended at 10 s by `rtcwake -m mem` (no announcement), woken by the alarm armed
        // while awake: the gap first, then the work, the device held for it.
        let resumed = machine.handle(.timeAsleep(total: seconds(190), now: seconds(200)))
        #expect(resumed.contains(.holdAwake(reason: "woken for refresh")))
        #expect(resumed.contains(.say(.woke(.refresh, late: .zero))))
        let gap = resumed.firstIndex(of: .resume(asleep: seconds(190)))
        let work = resumed.firstIndex(of: .runWork(.refresh))
        #expect(gap != nil && work != nil && gap! < work!, "the gap comes before the wake's first fix")
        // Suspended again before its fix: the work stays due, its wake not counted, and it runs
        // again at once (the device is awake).
        let again = machine.handle(.timeAsleep(total: seconds(250), now: seconds(265)))
        #expect(again.first == .say(.workInterrupted(.refresh)))
        #expect(again.contains(.say(.sleptUnannounced(asleep: seconds(60)))))
        #expect(again.contains(.say(.workDue(.refresh, late: seconds(65)))))
        #expect(again.contains(.runWork(.refresh)))
    }

    @Test func anAnnouncedSleepIsNotToldAgainAsUnannounced() {
        var machine = started()
        _ = machine.handle(.timeAsleep(total: .zero, now: .zero))
        _ = machine.handle(.sleepAnnounced(now: seconds(10)))
        _ = machine.handle(.prepared(now: seconds(11)))
        // The kernel's resume is read before logind's signal comes: the sleep is logind's.
        #expect(machine.handle(.timeAsleep(total: seconds(50), now: seconds(61))).isEmpty)
        #expect(machine.handle(.resumed(now: seconds(61))).contains(.say(.resumed(asleep: seconds(50)))))
        // Read after logind's signal: the same sleep, not told again.
        #expect(machine.handle(.timeAsleep(total: seconds(50), now: seconds(61))).isEmpty)
        // The next sleep nobody announced is counted from the end of that one.
        #expect(machine.handle(.timeAsleep(total: seconds(80), now: seconds(100))).contains(.say(.sleptUnannounced(asleep: seconds(30)))))
    }

    @Test func thePreparationFitsWithinLogindsDelay() {
        let options = DeviceSleepMachine.Options()
        #expect(options.fitted(toDelay: .seconds(5)).preparation == .seconds(4), "logind's default: the 4 s asked")
        #expect(options.fitted(toDelay: .seconds(30)).preparation == .seconds(4), "a longer delay gives no more than asked")
        #expect(options.fitted(toDelay: .seconds(2)).preparation == .milliseconds(1600))
        // The machine's own bound follows logind's delay as logind says it (at the connection,
        // and again after its restart): its preparation ends within the short delay.
        var machine = DeviceSleepMachine(options: options)
        #expect(machine.handle(.logindDelay(.seconds(5))).isEmpty, "the 4 s asked fit")
        #expect(machine.handle(.logindDelay(.seconds(2))) == [.say(.preparationFitted(.milliseconds(1600), delay: .seconds(2)))])
        #expect(machine.options.preparation == .milliseconds(1600))
        _ = machine.handle(.started(now: .zero))
        #expect(machine.handle(.sleepAnnounced(now: seconds(10))).suffix(2) == [.prepare(within: .milliseconds(1600)), .scheduleTimer(at: seconds(10) + .milliseconds(1600))])
        #expect(machine.handle(.timerFired(now: seconds(10) + .milliseconds(1600))) == [.releaseDelayLock])
        // logind restarted with a longer delay: the 4 s asked again, and nothing to say.
        #expect(machine.handle(.logindDelay(.seconds(10))).isEmpty)
        #expect(machine.options.preparation == .seconds(4))
    }

    @Test func theDelayLockIsHeldFromTheStartUntilASleepsPreparationIsDone() {
        var machine = started()
        #expect(machine.holdsDelayLock)
        _ = machine.handle(.sleepAnnounced(now: seconds(10)))
        #expect(machine.holdsDelayLock, "held while preparing")
        #expect(machine.handle(.prepared(now: seconds(11))) == [.releaseDelayLock])
        #expect(!machine.holdsDelayLock, "asleep: a lock taken again now would hold the sleep for logind's delay")
        #expect(machine.handle(.resumed(now: seconds(40))).contains(.takeDelayLock))
        #expect(machine.holdsDelayLock)
    }

    // MARK: Back to sleep

    @Test func aWakeOfOursGoesBackToSleepTheMomentItsWorkIsDone() {
        var machine = started()
        _ = sleep(&machine, wakingFor: .refresh, at: seconds(200), resumedAt: seconds(200))
        _ = machine.handle(.fixArrived(now: seconds(203)))
        #expect(machine.handle(.workDone(now: seconds(204))).last == .sleepAgain(wokeAt: seconds(200)))
        // A resume that was not our alarm's (the user's, another's) is never put back to sleep.
        _ = machine.handle(.sleepAnnounced(now: seconds(210)))
        _ = machine.handle(.prepared(now: seconds(210)))
        let resumed = machine.handle(.resumed(now: seconds(300)))
        #expect(!resumed.contains { if case .sleepAgain = $0 { true } else { false } })
        #expect(!resumed.contains(.runWork(.refresh)), "spent: the refresh's budget allows one in 15 minutes")
    }

    @Test func theUserInFrontTheRulesOrAnOptOutLeaveTheDeviceAwakeAfterTheWork() {
        func afterWork(_ prepare: (inout DeviceSleepMachine) -> Void, options: DeviceSleepMachine.Options = .init()) -> [DeviceSleepMachine.Action] {
            var machine = started(options)
            prepare(&machine)
            _ = sleep(&machine, wakingFor: .refresh, at: seconds(200), resumedAt: seconds(200))
            _ = machine.handle(.fixArrived(now: seconds(203)))
            return machine.handle(.workDone(now: seconds(204)))
        }
        let isSleepAgain: (DeviceSleepMachine.Action) -> Bool = { if case .sleepAgain = $0 { true } else { false } }
        #expect(afterWork { _ = $0.handle(.session(.active, now: .zero)) }.contains(where: isSleepAgain) == false, "the user's session in front")
        #expect(afterWork { _ = $0.handle(.session(.inactive, now: .zero)) }.contains(where: isSleepAgain), "a locked session: asked (logind says if it was used)")
        var optOut = DeviceSleepMachine.Options()
        optOut.sleepsAfterWork = false
        #expect(afterWork({ _ in }, options: optOut).contains(where: isSleepAgain) == false, "--no-back-to-sleep")
        // The rules hold the device once the work is done (another app runs with always).
        let held = afterWork { _ = $0.handle(.app(.init(app: "logger", state: .background, authorization: .always), now: .zero)) }
        #expect(held.contains(where: isSleepAgain) == false)
    }
}
