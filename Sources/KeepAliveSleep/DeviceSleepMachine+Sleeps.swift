import KeepAliveCore

/// Sleeps and resumes: announced by logind, or straight to the kernel and seen by the time
/// asleep since boot.
extension DeviceSleepMachine {
    /// The shortest sleep told as one when nobody announced it (shorter, nothing was missed).
    public static let unannouncedMinimum = Duration.seconds(1)

    mutating func sleepAnnounced(now: Duration) -> [Action] {
        switch phase {
        case .preparing, .asleep: return []
        case .awake, .working: break
        }
        let interrupted = interruptWork()
        // Armed before anything else (if it must move): a system whose delay is shorter than
        // the preparation suspends without waiting for it, and must still wake for the work.
        phase = .preparing(since: now, alarm: armed)
        let rearm = rearmForSleep(now: now)
        var actions: [Action] = interrupted + [.say(.sleepAnnounced(heldFor: heldFor))] + rearm
        if heldFor != nil {
            heldFor = nil
            actions.append(.letSleep(reason: "the device goes to sleep"))
        }
        return actions + [.prepare(within: options.preparation)]
    }

    mutating func prepared(now: Duration) -> [Action] {
        guard case .preparing = phase else { return [] }
        phase = .asleep(since: now, alarm: armed)
        // Armed again only if the alarm the sleep needs moved (its lead is counted from now).
        return rearmForSleep(now: now) + [.releaseDelayLock]
    }

    mutating func resumed(now: Duration) -> [Action] {
        let since: Duration
        let alarm: Alarm?
        switch phase {
        case .asleep(let start, let armed): (since, alarm) = (start, armed)
        case .preparing(let start, let armed): (since, alarm) = (start, armed)  // the sleep did not wait for us
        case .awake, .working: return []
        }
        asleepSinceBoot = nil  // this sleep's time is told here, not again at the next reading
        let (hold, work) = woke(alarm: alarm, now: now)
        return hold + [.takeDelayLock, .resume(asleep: now - since), .say(.resumed(asleep: now - since))] + work
    }

    /// A reading of the time asleep since boot: grown by ``unannouncedMinimum`` or more while
    /// no sleep was announced, the device slept unannounced. The delay lock is still held (no
    /// preparation released it): the resume is the same as an announced one's otherwise.
    mutating func timeAsleep(total: Duration, now: Duration) -> [Action] {
        defer { asleepSinceBoot = total }
        guard let before = asleepSinceBoot, total - before >= Self.unannouncedMinimum else { return [] }
        switch phase {
        case .preparing, .asleep: return []  // announced: its resume tells it
        case .awake, .working: break
        }
        let asleep = total - before
        let interrupted = interruptWork()
        let (hold, work) = woke(alarm: armed, now: now)
        return interrupted + hold + [.resume(asleep: asleep), .say(.sleptUnannounced(asleep: asleep))] + work
    }

    /// The device is awake again: for `alarm`'s work if it was the cause (within a second of its
    /// time, the RTC's resolution, or later; the alarm is then spent). The block lock as the
    /// rules now say, to be taken first: the device is held for the work before the slower
    /// steps of the resume (a loaded system's user or idle action may suspend it again within
    /// seconds); then the work, after the resume's steps (the gap comes before the wake's first fix).
    private mutating func woke(alarm: Alarm?, now: Duration) -> (hold: [Action], work: [Action]) {
        guard let alarm, now + .seconds(1) >= alarm.at else {
            phase = .awake
            return (hold(), [])
        }
        let kind = alarm.kind
        let disarm = setArmed(nil, now: now)
        startWork(kind, now: now, wokeAt: now)
        return (disarm + hold(), [.say(.woke(kind, late: max(.zero, now - alarm.at))), .runWork(kind)])
    }
}
