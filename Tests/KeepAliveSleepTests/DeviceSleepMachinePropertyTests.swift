import KeepAliveCore
import KeepAliveSleep
import Testing

/// Issue 83's invariant of ``DeviceSleepMachine``, on random lives (``SleepLife``): after every
/// event (alarms whose time comes awake and asleep, sleeps announced and not, resumes of every
/// kind, other programs' locks taken and released, budgets changed, work done and timed out),
/// whenever work is due a wake alarm is armed for it, in the future, within its budget.
struct DeviceSleepMachinePropertyTests {
    @Test func aDueWakeIsAlwaysArmedWithinItsBudget() {
        var counts: [String: Int] = [:]
        var lateness: [Duration] = []
        for seed in UInt64(1)...300 {
            var life = SleepLife(seed: seed)
            life.live(until: .seconds(6 * 3_600))
            #expect(life.failures.isEmpty, "seed \(seed): \(life.failures.first ?? "")")
            guard life.failures.isEmpty else { return }
            counts.merge(life.counts, uniquingKeysWith: +)
            lateness += life.lateness
        }
        // No wake of the alarm later than the rules allow (the RTC wakes on the second).
        #expect(lateness.allSatisfy { $0 <= .zero }, "late wakes: \(lateness.filter { $0 > .zero })")
        // The lives went through every case the invariant is about.
        for case_ in [
            "work due while awake", "work woken for", "woken by the alarm", "unannounced suspend", "announced suspend", "idle suspend",
            "user's suspend", "rtcwake -m mem", "foreign lock taken", "back to sleep refused: held by another", "budget changed",
            "suspend refused for an alarm within 2 s",
        ] {
            #expect(counts[case_, default: 0] > 0, "no life went through: \(case_) (\(counts))")
        }
    }

    /// The issue's first case, as it was tried: `--no-hold-awake --wake-budget poll=1/60s`,
    /// always; the poll's alarm for 10 s expires while the device is awake, then a suspend
    /// straight to the kernel for 200 s. The device was woken 265 s overdue; now the poll runs
    /// at 10 s, the next alarm is armed for 70 s, and for 130 s after that poll; the suspend at
    /// 75 s ends at 130 s, within the budget.
    @Test func anAlarmWhoseTimeComesWhileAwakeRunsItsWorkAndArmsTheNext() {
        var options = DeviceSleepMachine.Options()
        options.holdsAwake = false
        options.budgets[.poll] = WakeBudget(burst: 1, interval: .seconds(60))
        options.every[.poll] = .seconds(10)
        var machine = DeviceSleepMachine(options: options)
        _ = machine.handle(.started(now: .zero))
        _ = machine.handle(.timeAsleep(total: .zero, now: .zero))
        #expect(
            machine.handle(.app(.init(state: .background, authorization: .always), now: .zero))
                == [.armAlarm(at: .seconds(10), for: .poll), .say(.alarmArmed(.poll, in: .seconds(10))), .scheduleTimer(at: .seconds(10))]
        )
        // Its time comes while the device is awake: the poll runs now, held, and the next is armed.
        #expect(
            machine.handle(.timerFired(now: .seconds(10)))
                == [
                    .say(.workDue(.poll, late: .zero)), .holdAwake(reason: "work for poll, due while awake"), .runWork(.poll),
                    .armAlarm(at: .seconds(70), for: .poll), .say(.alarmArmed(.poll, in: .seconds(60))), .scheduleTimer(at: .seconds(55)),
                ]
        )
        #expect(machine.handle(.fixArrived(now: .seconds(11))) == [.deliverNow])
        // Done: the device was awake anyway, so it is not put back to sleep.
        #expect(
            machine.handle(.workDone(now: .seconds(12)))
                == [.say(.workEnded(.poll, timedOut: false)), .letSleep(reason: "done: work for poll"), .scheduleTimer(at: .seconds(70))]
        )
        #expect(machine.handle(.timerFired(now: .seconds(70))).contains(.armAlarm(at: .seconds(130), for: .poll)))
        _ = machine.handle(.fixArrived(now: .seconds(71)))
        _ = machine.handle(.workDone(now: .seconds(72)))
        // `rtcwake -m mem -s 200` at 75 s: the alarm for 130 s wakes the device for the poll.
        let resumed = machine.handle(.timeAsleep(total: .seconds(55), now: .seconds(130)))
        #expect(resumed.contains(.say(.woke(.poll, late: .zero))))
        #expect(resumed.contains(.say(.sleptUnannounced(asleep: .seconds(55)))))
        #expect(resumed.contains(.armAlarm(at: .seconds(190), for: .poll)))
    }
}
