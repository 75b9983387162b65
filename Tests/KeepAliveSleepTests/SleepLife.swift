import KeepAliveCore
import KeepAliveSleep

/// A device's life around a ``DeviceSleepMachine``, on a test clock: its executor (the kernel's
/// wake alarm, the process's one timer, the block lock, the work's fix and delivery), logind
/// (a sleep announced, its 5 s delay, the idle action that no block lock may pass), a loaded
/// kernel (0-8 s from the preparation to the suspend; a suspend refused for an alarm due within
/// 2 s; an alarm that expired before the suspend wakes nothing), the user (suspends asked as
/// root, which pass every lock; `rtcwake -m mem` straight to the kernel; wakes at any time),
/// and other programs' block locks. Random, from a seed: the same seed, the same life.
struct SleepLife {
    private(set) var machine: DeviceSleepMachine
    private(set) var oracle: WakeOracle
    private var random: SeededRandom
    private(set) var now = Duration.zero
    /// What went against the rules, with the events that led there.
    private(set) var failures: [String] = []
    /// What the life went through, for the test to see it covered the cases.
    private(set) var counts: [String: Int] = [:]
    /// How late each wake of the alarm came against the latest time the rules allow.
    private(set) var lateness: [Duration] = []

    private var asleepTotal = Duration.zero
    private var alarm: DeviceSleepMachine.Alarm?
    private var timer: Duration?
    private var held: String?
    private var foreignLock = false
    private var state = State.awake
    private var pending: [(at: Duration, what: Pending)] = []
    private var trace: [String] = []

    private enum State {
        case awake
        /// Announced; the delay lock not yet released (logind waits at most 5 s).
        case preparing
        /// The kernel suspends at `at`.
        case suspending(at: Duration, announced: Bool, userWake: Duration?)
        /// Asleep since `since`, until `wakeAt` (by our alarm when `byAlarm`); `latest`: the
        /// latest time the rules allowed for the wake of the work due.
        case asleep(since: Duration, announced: Bool, wakeAt: Duration, byAlarm: Bool, latest: Duration?)
    }

    private enum Pending: Equatable {
        case fix, givenUp, delivered, prepared, delayOver, external
    }

    init(seed: UInt64) {
        random = SeededRandom(seed: seed)
        var options = DeviceSleepMachine.Options()
        options.every = [:]
        if random.chance(0.7) { options.every[.poll] = random.pick([.seconds(10), .seconds(60)]) }
        if random.chance(0.5) { options.every[.monitoring] = .seconds(random.int(in: 30...300)) }
        for kind in WakeKind.allCases where random.chance(0.6) {
            options.budgets[kind] = WakeBudget(burst: random.int(in: 1...2), interval: .seconds(random.int(in: 30...900)))
        }
        options.holdsAwake = random.chance(0.5)
        options.fixWait = .seconds(random.int(in: 10...45))
        machine = DeviceSleepMachine(options: options)
        oracle = WakeOracle(options: options)
        oracle.started(now: .zero)
        send(.started(now: .zero))
        send(.timeAsleep(total: .zero, now: .zero))
        schedule(.external, in: .seconds(1))
    }

    /// Lives until `end` of the boot clock.
    mutating func live(until end: Duration) {
        while now < end, failures.isEmpty, let next = nextTime() {
            now = next
            step()
        }
    }

    // MARK: The world's clock

    private var processRuns: Bool {
        if case .asleep = state { return false }
        return true
    }

    private func nextTime() -> Duration? {
        var times = pending.map(\.at)
        if processRuns, let timer { times.append(timer) }
        switch state {
        case .suspending(let at, _, _): times.append(at)
        case .asleep(_, _, let wakeAt, _, _): times.append(wakeAt)
        case .awake, .preparing: break
        }
        return times.min()
    }

    private mutating func step() {
        switch state {
        case .suspending(let at, let announced, let userWake) where at <= now:
            suspend(announced: announced, userWake: userWake)
            return
        case .asleep(let since, let announced, let wakeAt, let byAlarm, let latest) where wakeAt <= now:
            wake(since: since, announced: announced, byAlarm: byAlarm, latest: latest)
            return
        default: break
        }
        if processRuns, let timer, timer <= now {
            fire(timer)
            return
        }
        guard let index = pending.indices.min(by: { pending[$0].at < pending[$1].at }) else { return }
        let what = pending.remove(at: index).what
        switch what {
        case .fix:
            oracle.fixed()
            send(.fixArrived(now: now))
        case .givenUp: send(.fixGivenUp(now: now))
        case .delivered: send(.workDone(now: now))
        case .prepared: send(.prepared(now: now))
        case .delayOver:
            if case .preparing = state { beginSuspend(announced: true) }
        case .external:
            external()
            schedule(.external, in: .milliseconds(random.int(in: 1_000...120_000)))
        }
    }

    private mutating func schedule(_ what: Pending, in delay: Duration) {
        pending.append((now + delay, what))
    }

    private mutating func cancel(_ what: Pending) { pending.removeAll { $0.what == what } }

    // MARK: The machine and its executor

    private mutating func send(_ event: DeviceSleepMachine.Event) {
        trace.append("\(now): \(event)")
        if trace.count > 40 { trace.removeFirst() }
        for action in machine.handle(event) { perform(action) }
        check()
    }

    private mutating func perform(_ action: DeviceSleepMachine.Action) {
        trace.append("    \(action)")
        switch action {
        case .holdAwake(let reason): held = reason
        case .letSleep: held = nil
        case .takeDelayLock: break
        case .releaseDelayLock:
            if case .preparing = state { beginSuspend(announced: true) }
        case .prepare:
            schedule(.prepared, in: .milliseconds(random.int(in: 0...6_000)))
            schedule(.delayOver, in: .seconds(5))
        case .resume: break
        case .armAlarm(let at, let kind): alarm = DeviceSleepMachine.Alarm(kind: kind, at: at)
        case .disarmAlarm: alarm = nil
        case .runWork(let kind):
            workStarted(kind)
        case .deliverNow:
            cancel(.delivered)
            schedule(.delivered, in: .milliseconds(random.int(in: 0...3_000)))
        case .sleepAgain:
            count("back to sleep asked")
            // The executor asks logind only when nobody else holds the device; nobody used it.
            if foreignLock { count("back to sleep refused: held by another") } else if case .awake = state, random.chance(0.9) { announce() }
        case .scheduleTimer(let at): timer = at
        case .say(let notice):
            switch notice {
            case .workEnded: oracle.workEnded()
            case .noFix: oracle.fixed()
            default: break
            }
        }
    }

    private mutating func workStarted(_ kind: WakeKind) {
        count(held?.hasPrefix("woken") == true ? "work woken for" : "work due while awake")
        // Never earlier than the budget allows (the RTC's second of margin for a wake).
        if let earliest = oracle.earliest(kind), earliest > now + .seconds(1) {
            fail("work for \(kind) started at \(now), before its budget allows it (\(earliest))")
        } else if oracle.earliest(kind) == nil, !isWokenForAnAlarmArmedBefore {
            fail("work for \(kind) started at \(now) with none due")
        }
        oracle.workStarted(kind, now: now)
        cancel(.fix)
        cancel(.givenUp)
        cancel(.delivered)
        // A fix, or the work's own wait (the receiver's measured start) given up before the
        // machine's bound, or nothing until that bound.
        if random.chance(0.8) {
            schedule(.fix, in: .milliseconds(random.int(in: 500...60_000)))
        } else if random.chance(0.5) {
            schedule(.givenUp, in: .milliseconds(random.int(in: 500...30_000)))
        }
    }

    /// A wake's work runs for the alarm the sleep was armed for, even if its work was taken
    /// back while the kernel had the device (nothing runs then to disarm it).
    private var isWokenForAnAlarmArmedBefore: Bool { held?.hasPrefix("woken") == true }

    // MARK: The invariant

    /// After every event: whenever work is due, the alarm is armed for it in the future, no
    /// earlier than its budget allows and no later than that or 5 s from now; nothing armed when
    /// nothing is due; and the process's timer comes no later than the alarm (so that an alarm
    /// whose time comes while the device is awake is seen, and armed again).
    private mutating func check() {
        let lead = DeviceSleepMachine.alarmLead
        guard let due = oracle.earliest else {
            if let alarm { fail("an alarm is armed (\(alarm)) at \(now) with no work due") }
            return
        }
        guard let alarm else { return fail("work for \(due.kind) is due at \(due.at) and no alarm is armed at \(now)") }
        if alarm.at <= now { fail("the alarm (\(alarm)) is not in the future at \(now)") }
        if let earliest = oracle.earliest(alarm.kind), alarm.at < earliest {
            fail("the alarm (\(alarm)) is earlier than its budget allows (\(earliest))")
        }
        if alarm.at > max(due.at, now + lead) { fail("the alarm (\(alarm)) is later than the work due (\(due)) or 5 s from \(now)") }
        if processRuns, timer.map({ $0 > alarm.at }) ?? true {
            fail("the process's timer (\(String(describing: timer))) comes after the alarm (\(alarm)) at \(now)")
        }
    }

    private mutating func fail(_ what: String) {
        let views = WakeKind.allCases.map { kind in
            "\(kind): the machine's next \(String(describing: machine.nextWake(of: kind, from: now))), "
                + "the oracle's \(String(describing: oracle.earliest(kind))) (budget \(String(describing: oracle.budgets[kind])))"
        }
        failures.append(([what] + views + ["  the last events:"] + trace.map { "  \($0)" }).joined(separator: "\n"))
    }

    private mutating func count(_ what: String) { counts[what, default: 0] += 1 }

    // MARK: Sleeps

    /// logind announces a sleep (an idle action, a user's suspend, a back-to-sleep).
    private mutating func announce() {
        count("announced sleep")
        oracle.sleepCame()
        state = .preparing
        send(.sleepAnnounced(now: now))
    }

    private mutating func beginSuspend(announced: Bool, userWake: Duration? = nil) {
        cancel(.delayOver)
        state = .suspending(at: now + .milliseconds(random.int(in: 0...8_000)), announced: announced, userWake: userWake)
    }

    /// The kernel suspends now: woken by the alarm if one is armed at least 2 s ahead (within 2
    /// s the suspend is refused), or by the user; an alarm already expired wakes nothing.
    private mutating func suspend(announced: Bool, userWake: Duration?) {
        if let alarm, alarm.at > now, alarm.at < now + .seconds(2) {
            count("suspend refused for an alarm within 2 s")
            state = .asleep(since: now, announced: announced, wakeAt: now, byAlarm: false, latest: nil)
            return
        }
        cancel(.fix)
        cancel(.givenUp)
        cancel(.delivered)
        cancel(.prepared)
        let user = userWake ?? now + .seconds(random.int(in: 10...7_200))
        let byAlarm = alarm.map { $0.at > now && $0.at < user } ?? false
        let latest = oracle.earliest.map { max($0.at, now) }
        count(announced ? "announced suspend" : "unannounced suspend")
        state = .asleep(since: now, announced: announced, wakeAt: byAlarm ? alarm!.at : user, byAlarm: byAlarm, latest: latest)
    }

    /// The device wakes: logind's resume signal and the kernel's word come in either order, the
    /// timers that passed after them (the keeper reads the time asleep before each timer).
    private mutating func wake(since: Duration, announced: Bool, byAlarm: Bool, latest: Duration?) {
        asleepTotal += now - since
        state = .awake
        if byAlarm {
            count("woken by the alarm")
            // As late as the alarm may be: the work's time, or 5 s into a sleep begun just before it.
            if let latest { lateness.append(now - max(latest, since + DeviceSleepMachine.alarmLead)) }
        } else if let latest, now > max(latest, since + DeviceSleepMachine.alarmLead) + .seconds(1) {
            fail("asleep from \(since) to \(now), past the latest wake the rules allow (\(latest)), and not woken by the alarm")
        }
        // A suspend the kernel refused is no sleep; one nobody announced is told from 1 s.
        if !announced, now - since >= DeviceSleepMachine.unannouncedMinimum { oracle.sleepCame() }
        // The kernel's word (the resume watch) may come before logind's or after it; the
        // keeper reads the time asleep again right after logind's.
        let reading = DeviceSleepMachine.Event.timeAsleep(total: asleepTotal, now: now)
        let events: [DeviceSleepMachine.Event] =
            announced ? (random.chance(0.5) ? [reading] : []) + [.resumed(now: now), reading] : [reading]
        guard let timer, timer <= now else { return events.forEach { send($0) } }
        if random.chance(0.3) {
            fire(timer)
            events.forEach { send($0) }
        } else {
            events.forEach { send($0) }
            fire(timer)
        }
    }

    /// The process's timer for `time` fires: the keeper reads the time asleep, then tells the
    /// timer (a timer asked for meanwhile is another's, and stays).
    private mutating func fire(_ time: Duration) {
        send(.timeAsleep(total: asleepTotal, now: now))
        if timer == time { timer = nil }
        send(.timerFired(now: now))
    }

    // MARK: What happens around the device

    private mutating func external() {
        guard case .awake = state else {
            // While a sleep is on its way the apps and the host still tell the machine things.
            if processRuns, random.chance(0.5) { tell() }
            return
        }
        switch random.int(in: 0...9) {
        case 0...3: tell()
        case 4:
            count("user's suspend")
            announce()
        case 5:
            if held == nil, !foreignLock {
                count("idle suspend")
                announce()
            }
        case 6, 7:
            count("rtcwake -m mem")
            state = .suspending(at: now, announced: false, userWake: now + .seconds(random.int(in: 10...600)))
        default:
            foreignLock.toggle()
            count(foreignLock ? "foreign lock taken" : "foreign lock released")
        }
    }

    /// The rules, the session, the work's times, the budgets: what the service and the host tell.
    private mutating func tell() {
        switch random.int(in: 0...3) {
        case 0:
            let rules = DeviceSleepMachine.AppRules(
                app: random.pick([nil, "other"]), state: random.pick([.background, .suspended, .notRunning]),
                authorization: random.pick([.always, .whenInUse, .denied])
            )
            oracle.app(rules)
            send(.app(rules, now: now))
        case 1: send(.session(random.pick([.active, .inactive, .none]), now: now))
        case 2:
            let kind = random.pick(WakeKind.allCases)
            let at: Duration? = random.chance(0.8) ? now + .seconds(random.int(in: -60...1_800)) : nil
            oracle.due[kind] = at
            send(.wake(kind, at: at, now: now))
        default:
            count("budget changed")
            let kind = random.pick(WakeKind.allCases)
            let budget = random.chance(0.8) ? WakeBudget(burst: random.int(in: 1...2), interval: .seconds(random.int(in: 20...900))) : nil
            oracle.budget(kind, budget)
            send(.budget(kind, budget, now: now))
        }
    }
}

/// SplitMix64: a small generator whose sequence a seed fixes.
struct SeededRandom {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }

    mutating func int(in range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.upperBound - range.lowerBound + 1))
    }

    mutating func chance(_ probability: Double) -> Bool { Double(next() % 1_000_000) < probability * 1_000_000 }

    mutating func pick<T>(_ values: [T]) -> T { values[int(in: 0...(values.count - 1))] }
}
