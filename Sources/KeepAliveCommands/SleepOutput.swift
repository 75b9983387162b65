import KeepAliveSleep

extension Output {
    /// A notice of the device's sleep as JSON fields: `sleep` says what happened (`followed`
    /// with its `way`: `logind`, `wakelocks` or `both`, and the `wakelock`'s name; `lock`,
    /// `unlock`, `wakelock` and `wakeunlock` with its `name`, `announced`, `alarm`, `resumed` (`announced: false` for a sleep nobody
    /// announced), `woke`, `due` (work
    /// whose time came while the device was awake, run then), `no-fix`, `work-done`,
    /// `work-interrupted`, `back-to-sleep` (with `why` when it was not asked), `held by another`
    /// (with `who`: a wake's work done, another program's lock holds the device), `session`, `preparation` (its bound in `seconds`, within
    /// logind's `delay`), `relocked` (logind restarted or connected again), `failed`,
    /// `not-followed`), with the lock's `mode` and `why`, the `kind` of work, and durations in
    /// `seconds`.
    static func describe(sleep notice: SleepNotice, in object: inout JSONLine) {
        switch notice {
        case .lockTaken(let mode, let why):
            object["sleep"] = "lock"
            object["mode"] = .string(mode.rawValue)
            object["why"] = .string(why)
        case .lockReleased(let mode, let why, let held):
            object["sleep"] = "unlock"
            object["mode"] = .string(mode.rawValue)
            object["why"] = .string(why)
            object["seconds"] = .number(held.seconds)
        case .followed(let way, let wakelock):
            object["sleep"] = "followed"
            object["way"] = .string(way.rawValue)
            object["wakelock"] = wakelock.map { .string($0) }
        case .wakelockTaken(let name, let why):
            object["sleep"] = "wakelock"
            object["name"] = .string(name)
            object["why"] = .string(why)
        case .wakelockReleased(let name, let why, let held):
            object["sleep"] = "wakeunlock"
            object["name"] = .string(name)
            object["why"] = .string(why)
            object["seconds"] = .number(held.seconds)
        case .failed(let reason):
            object["sleep"] = "failed"
            object["message"] = .string(reason)
        case .relocked(let why):
            object["sleep"] = "relocked"
            object["why"] = .string(why)
        case .notFollowed(let reason):
            object["sleep"] = "not-followed"
            object["message"] = .string(reason)
        case .session(let state):
            object["sleep"] = "session"
            object["session"] = .string(state.rawValue)
        case .preparationFitted(let within, let delay):
            object["sleep"] = "preparation"
            object["seconds"] = .number(within.seconds)
            object["delay"] = .number(delay.seconds)
        case .sleepAnnounced(let heldFor):
            object["sleep"] = "announced"
            object["why"] = heldFor.map { .string($0) }
        case .alarmArmed(let kind, let delay):
            object["sleep"] = "alarm"
            object["kind"] = .string(kind.rawValue)
            object["seconds"] = .number(delay.seconds)
        case .resumed(let asleep):
            object["sleep"] = "resumed"
            object["seconds"] = .number(asleep.seconds)
        case .sleptUnannounced(let asleep):
            object["sleep"] = "resumed"
            object["announced"] = .bool(false)
            object["seconds"] = .number(asleep.seconds)
        case .woke(let kind, let late):
            object["sleep"] = "woke"
            object["kind"] = .string(kind.rawValue)
            object["seconds"] = .number(late.seconds)
        case .workDue(let kind, let late):
            object["sleep"] = "due"
            object["kind"] = .string(kind.rawValue)
            object["seconds"] = .number(late.seconds)
        case .noFix(let kind, let waited):
            object["sleep"] = "no-fix"
            object["kind"] = .string(kind.rawValue)
            object["seconds"] = .number(waited.seconds)
        case .workEnded(let kind, let timedOut):
            object["sleep"] = "work-done"
            object["kind"] = .string(kind.rawValue)
            object["timedOut"] = .bool(timedOut)
        case .workInterrupted(let kind):
            object["sleep"] = "work-interrupted"
            object["kind"] = .string(kind.rawValue)
        case .heldByAnother(let who):
            object["sleep"] = "held by another"
            object["who"] = .string(who.joined(separator: ", "))
        case .backToSleep(let refused):
            object["sleep"] = "back-to-sleep"
            object["why"] = refused.map { .string($0) }
        }
    }
}
