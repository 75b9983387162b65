import KeepAliveCore

/// The wakes: the alarm kept armed for the earliest work due, the one timer, and the work run
/// when its time comes, asleep (the alarm's wake) or awake.
extension DeviceSleepMachine {
    /// After every event: work due while the device is awake runs now; the alarm is armed for
    /// the earliest work due (``keepArmed(now:)``); the timer is asked for the earliest time the
    /// machine waits for. `continuing` is the wake of ours whose work just ended, if one did:
    /// work due at its end belongs to that wake (the device goes back to sleep after it).
    mutating func settle(now: Duration, continuing wokeAt: Duration? = nil) -> [Action] {
        var actions: [Action] = []
        if phase == .awake, let next = earliestDue(), next.at <= now {
            startWork(next.kind, now: now, wokeAt: wokeAt)
            actions = [.say(.workDue(next.kind, late: now - next.at))] + hold() + [.runWork(next.kind)]
        }
        return actions + keepArmed(now: now) + keepTimer(now: now)
    }

    /// The earliest work due and the earliest time its budget allows it (in the past when it is
    /// overdue). The hybrid's poll wakes the device only when authorized always, as iOS allows it.
    func earliestDue() -> Alarm? {
        let always = apps.values.contains { $0.authorization == .always }
        return options.wakes.filter { $0 != .poll || always }
            .compactMap { kind in due[kind].map { Alarm(kind: kind, at: (budgets[kind] ?? kind.defaultBudget).nextWake(from: $0)) } }
            .min { ($0.at, $0.kind.rawValue) < ($1.at, $1.kind.rawValue) }  // ties: the same kind each time
    }

    /// The alarm for a sleep beginning at `now`: the earliest work due, at least ``alarmLead``
    /// after the sleep begins (the kernel refuses to suspend for an alarm due within 2 s, and
    /// work already due waits for the shortest sleep).
    func nextAlarm(from now: Duration) -> Alarm? {
        earliestDue().map { Alarm(kind: $0.kind, at: max($0.at, now + Self.alarmLead)) }
    }

    /// The invariant: whenever work is due, the alarm is armed for it, in the future, no
    /// earlier than its budget allows and no later than that or ``alarmLead`` from now,
    /// whichever is later; nothing due, nothing armed. An alarm within those bounds stays as it
    /// is (a sleep's, armed with its lead when it was announced and prepared, is not pushed on
    /// as time passes); one outside them is armed again, a sleep on its way then woken for it.
    private mutating func keepArmed(now: Duration) -> [Action] {
        guard let next = earliestDue() else { return setArmed(nil, now: now) }
        if let armed, armed.kind == next.kind, armed.at > now, armed.at >= next.at, armed.at <= max(next.at, now + Self.alarmLead) {
            return []
        }
        switch phase {
        case .preparing, .asleep:
            // Its time passed before the kernel suspended: armed again, the sleep still the
            // alarm's. Otherwise the work moved: the sleep is woken for it now.
            if let armed, armed.at <= now { return alarmPassedBeforeTheSuspend(now: now) }
            return rearmForSleep(now: now)
        case .awake, .working: return setArmed(Alarm(kind: next.kind, at: max(next.at, now + Self.alarmLead)), now: now)
        }
    }

    /// While a sleep is prepared or under way: the alarm it needs, armed again if it moved (its
    /// lead counted from `now`: at the announcement and at the preparation's end, the kernel's
    /// suspend may follow at once), and the sleep woken for it.
    mutating func rearmForSleep(now: Duration) -> [Action] {
        let alarm = nextAlarm(from: now)
        guard alarm != armed else { return [] }
        switch phase {
        case .preparing(let since, _): phase = .preparing(since: since, alarm: alarm)
        case .asleep(let since, _): phase = .asleep(since: since, alarm: alarm)
        case .awake, .working: break
        }
        return setArmed(alarm, now: now)
    }

    /// Arms `alarm` (for none, disarms the one armed) and keeps it as the one armed.
    mutating func setArmed(_ alarm: Alarm?, now: Duration) -> [Action] {
        defer { armed = alarm }
        guard let alarm else { return armed == nil ? [] : [.disarmAlarm] }
        return [.armAlarm(at: alarm.at, for: alarm.kind), .say(.alarmArmed(alarm.kind, in: alarm.at - now))]
    }

    /// The one timer: at the earliest of what the machine waits for. Awake, the next work's
    /// time; at work, its bound, or the alarm's time if that comes first (armed again then); a
    /// sleep on its way, the preparation's bound and the alarm's time (an alarm that expires
    /// before the kernel suspends wakes nothing: ``alarmPassedBeforeTheSuspend(now:)``).
    private mutating func keepTimer(now: Duration) -> [Action] {
        let wanted: Duration? =
            switch phase {
            case .awake: earliestDue()?.at
            case .working(_, _, let until): min(until, armed?.at ?? until)
            case .preparing(let since, _): min(since + options.preparation, armed?.at ?? since + options.preparation)
            case .asleep: armed?.at
            }
        guard wanted != timer else { return [] }
        timer = wanted
        return wanted.map { [.scheduleTimer(at: $0)] } ?? []
    }

    /// The alarm's time came while a sleep was still on its way: a loaded system can take
    /// seconds from the preparation to the kernel's suspend, and an alarm that expires before it
    /// wakes nothing (the device then sleeps until something else wakes it, its work's time
    /// past). Armed again `alarmLead` from now (within 2 s of it the kernel refuses to suspend);
    /// the sleep keeps the alarm it was armed for, so whatever ends it, that work is due.
    mutating func alarmPassedBeforeTheSuspend(now: Duration) -> [Action] {
        guard let alarm = armed, now >= alarm.at else { return [] }
        return setArmed(Alarm(kind: alarm.kind, at: now + Self.alarmLead), now: now)
    }

    /// Work of `kind` starts at `now`: counted against its budget, due again after its period,
    /// the device held for it until its fix is delivered. `wokeAt`: the wake of ours it is for.
    mutating func startWork(_ kind: WakeKind, now: Duration, wokeAt: Duration?) {
        work = Work(wokeAt: wokeAt, budget: budgets[kind], due: due[kind] ?? now)
        budgets[kind, default: kind.defaultBudget].spend(at: now)
        due[kind] = options.every[kind].map { now + $0 }
        phase = .working(kind, fixed: false, until: now + options.fixWait)
    }

    /// A sleep came during work. Before its fix (the work, its app's task, not done): the work
    /// stays due at its time and its wake is not counted, so that the next alarm wakes the
    /// device for it again, not a budget's period later.
    mutating func interruptWork() -> [Action] {
        defer { work = nil }
        guard case .working(let kind, false, _) = phase, let before = work else { return [] }
        budgets[kind] = before.budget
        due[kind] = min(due[kind] ?? before.due, before.due)
        return [.say(.workInterrupted(kind))]
    }

    /// Work ended (delivered, or its time ran out). After a wake of ours, the device goes back
    /// to sleep at once, as a phone does when its last wakelock goes: with nothing of the rules
    /// holding it and the user's session not in front (whether anyone used the device since the
    /// wake, or another program holds it, is the executor's to ask). Work that ran while the
    /// device was awake anyway leaves it as it was.
    mutating func workEnded(_ kind: WakeKind, now: Duration, timedOut: Bool) -> [Action] {
        phase = .awake
        let wokeAt = work?.wokeAt
        work = nil
        let ended = wokeAt == nil ? "done: work for \(kind.rawValue)" : "done: woken for \(kind.rawValue)"
        let actions = [.say(.workEnded(kind, timedOut: timedOut))] + hold(ended: ended) + settle(now: now, continuing: wokeAt)
        guard options.sleepsAfterWork, heldFor == nil, session != .active, let wokeAt else { return actions }
        return actions + [.sleepAgain(wokeAt: wokeAt)]
    }
}
