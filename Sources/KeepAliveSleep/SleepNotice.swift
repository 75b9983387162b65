import KeepAliveCore

/// What the device's sleep did, for the output, `status` and metrics: every lock and every
/// wake, why, for which kind of work and for how long.
public enum SleepNotice: Sendable, Equatable, CustomStringConvertible {
    /// A lock is taken: `block` holds the device awake, `delay` lets a sleep wait for the preparation.
    case lockTaken(InhibitorLock.Mode, why: String)
    /// A lock is released after being held for `held`.
    case lockReleased(InhibitorLock.Mode, why: String, held: Duration)
    /// The sleep is followed through `way`, holding the wakelock `wakelock` (when the way has one).
    case followed(DeviceSleepWay, wakelock: String?)
    /// The kernel's wakelock `name` is held (renewed until released).
    case wakelockTaken(String, why: String)
    /// The wakelock `name` is released after being held for `held`.
    case wakelockReleased(String, why: String, held: Duration)
    /// Something failed (a lock refused, the alarm not armed); the service goes on.
    case failed(String)
    /// The locks the rules hold were taken again, and why (logind restarted, or the bus was
    /// lost and connected again).
    case relocked(String)
    /// The device's sleep is not followed, and why (no logind: a device without it does not
    /// sleep through it).
    case notFollowed(String)
    /// The user's session changed.
    case session(SessionState)
    /// logind's delay (`InhibitDelayMaxUSec`) is short: a sleep's preparation is given `within`.
    case preparationFitted(Duration, delay: Duration)
    /// logind announced a sleep; the `block` lock was held for this reason, if it was.
    case sleepAnnounced(heldFor: String?)
    /// The wake alarm is armed for `kind`, `in` from now.
    case alarmArmed(WakeKind, in: Duration)
    /// The device resumed after `asleep`, not for an alarm of ours.
    case resumed(asleep: Duration)
    /// The device slept `asleep` with no announcement (suspended straight through the kernel:
    /// `rtcwake -m mem`, a phone's own suspend): its time is a gap, the watch and delivery resumed.
    case sleptUnannounced(asleep: Duration)
    /// The device woke for `kind`, `late` after the alarm's time.
    case woke(WakeKind, late: Duration)
    /// Work of `kind` came due while the device was awake (its alarm's time, `late` after it):
    /// it runs now, and the alarm is armed for the next.
    case workDue(WakeKind, late: Duration)
    /// A wake for `kind` had no fix within `waited`.
    case noFix(WakeKind, waited: Duration)
    /// A wake's work ended (delivered, or its time ran out).
    case workEnded(WakeKind, timedOut: Bool)
    /// A sleep came before a wake's work was done: the work stays due, its wake not counted.
    case workInterrupted(WakeKind)
    /// A wake's work is done: the sleep was asked at once (`nil`), or not, and why.
    case backToSleep(refused: String?)
    /// A wake's work is done, but another program holds the device awake (`who`: logind's
    /// block lock's, a wakelock's name): no sleep asked, logind's idle action decides. Said once
    /// while the same programs hold it.
    case heldByAnother(who: [String])

    /// The notice in words, as the output prints it.
    public var description: String {
        switch self {
        case .lockTaken(let mode, let why): "sleep: \(mode.rawValue) lock taken: \(why)"
        case .lockReleased(let mode, let why, let held): "sleep: \(mode.rawValue) lock released after \(held.secondsText): \(why)"
        case .followed(let way, let wakelock): "sleep: followed through \(way)" + (wakelock.map { " (wakelock \($0))" } ?? "")
        case .wakelockTaken(let name, let why): "sleep: wakelock \(name) held: \(why)"
        case .wakelockReleased(let name, let why, let held): "sleep: wakelock \(name) released after \(held.secondsText): \(why)"
        case .failed(let reason): "sleep: \(reason)"
        case .relocked(let why): "sleep: \(why): the locks the rules hold are taken again"
        case .notFollowed(let reason): "sleep: not followed: \(reason)"
        case .session(let state): "sleep: the user's session is \(state.rawValue)"
        case .preparationFitted(let within, let delay):
            "sleep: logind waits \(delay.secondsText) for a sleep's preparation (InhibitDelayMaxSec): it is given \(within.secondsText)"
        case .sleepAnnounced(let reason):
            "sleep: the device goes to sleep" + (reason.map { " (overriding the lock held for \($0))" } ?? "")
        case .alarmArmed(let kind, let delay): "sleep: wake alarm armed for \(kind.rawValue) in \(delay.secondsText)"
        case .resumed(let asleep): "sleep: resumed after \(asleep.secondsText) asleep"
        case .sleptUnannounced(let asleep): "sleep: slept \(asleep.secondsText), unannounced"
        case .woke(let kind, let late): "sleep: woke for \(kind.rawValue), \(late.secondsText) after the alarm's time"
        case .workDue(let kind, let late): "sleep: work for \(kind.rawValue) due while awake (\(late.secondsText) after its time): run now"
        case .noFix(let kind, let waited): "sleep: no fix within \(waited.secondsText) of the wake for \(kind.rawValue)"
        case .workEnded(let kind, let timedOut):
            "sleep: the wake for \(kind.rawValue) " + (timedOut ? "ran out of time" : "is done") + "; the device may sleep"
        case .workInterrupted(let kind): "sleep: the device sleeps before the work for \(kind.rawValue) is done; it stays due"
        case .heldByAnother(let who): "sleep: left awake after the wake's work: held by another (\(who.joined(separator: ", ")))"
        case .backToSleep(let refused): refused.map { "sleep: left awake after the wake's work: \($0)" } ?? "sleep: back to sleep at once after the wake's work"
        }
    }
}
