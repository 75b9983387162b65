public import KeepAliveCore

/// The device's sleep under the model's rules, as a value: events in, actions out, shaped like
/// ``HybridKeepAliveMachine``. Its executor (``DeviceSleepKeeper``) talks to logind and the wake
/// alarm; this type only decides, on the boot clock (`CLOCK_BOOTTIME`: it runs on while the
/// device sleeps), so a test drives it with plain durations.
///
/// What it decides:
/// - **Whether to hold the device awake** (a logind `sleep` lock in `block` mode): only while
///   the model lets the app run. Always with the location mode: while the app runs and is not
///   paused as stationary. Otherwise (when in use during its background task, the hybrid's audio
///   with denied): the same, and never once the user's session is inactive. Released the moment
///   the rule stops holding: the model suspended the app, the session went inactive.
/// - **Sleep and resume**: a `delay` lock is held while awake; when logind announces a sleep,
///   the wake alarm is armed first (logind may not wait for the preparation: its delay is its
///   own, `InhibitDelayMaxUSec`), then the location watch is closed, the journal committed,
///   delivery given at most ``Options/preparation``, the alarm armed again if the time it
///   needs moved, and only then the delay lock released. On the resume,
///   the time asleep is a gap, the watch reopens, delivery goes on, and the delay lock is taken
///   again for the next sleep. A sleep nobody announced (a suspend straight to the kernel) is
///   seen by the time asleep since boot grown between two readings: resumed the same way.
/// - **Wakes**: work the rules wake an app for (a refresh task at its begin date, the monitoring
///   strategy's check, the hybrid's poll when authorized always) arms the wake alarm, as each
///   kind's ``WakeBudget`` allows: work due while its budget is spent waits for the first time
///   the budget allows. The alarm is armed as soon as the work's time is known, awake or not
///   (while awake it only expires), and armed again when a later announcement or a change
///   moves it: a sleep announced too late for the keeper (a loaded device, logind's delay
///   already over), or not announced at all, is still woken for the work. Work due within the
///   shortest sleep is armed for at the announcement. A wake holds the device awake for its
///   work (a fix, at most ``Options/fixWait``, then its delivery) and lets it sleep again.
public struct DeviceSleepMachine: Sendable {
    /// What the rules allow, and how long each step may take.
    public struct Options: Sendable, Equatable {
        /// Whether the device is held awake while the app runs (`false`: never; sleeps are
        /// still prepared for, and a wake's work is still held until its fix is delivered).
        public var holdsAwake = true
        /// How often each kind of work may wake the device.
        public var budgets: [WakeKind: WakeBudget] = WakeKind.defaultBudgets
        /// The kinds of work that may wake the device at all.
        public var wakes = Set(WakeKind.allCases)
        /// How long a wake waits for a fix: a receiver that slept needs a warm start (about
        /// 30 s with a valid almanac; a hot start, a few seconds, once its ephemeris is
        /// fresh). A wake with no fix by then delivers what it has and lets the device sleep.
        public var fixWait: Duration = .seconds(45)
        /// Work that wants the device awake periodically, and how often (the hybrid's poll at
        /// its interval, the monitoring strategy's check): due from the start, and again that
        /// long after each wake for it. Each waits for its budget as any work does.
        public var every: [WakeKind: Duration] = [:]
        /// After a wake of ours whose work is done, whether the device is put back to sleep at
        /// once (when nothing of the rules holds it, the user's session is not active, and
        /// nobody used the device since the wake), rather than at the system's idle action.
        public var sleepsAfterWork = true
        /// How long the preparation for a sleep (commit, delivery, closing the watch) may take:
        /// within logind's `InhibitDelayMaxSec` (5 s by default; ``fitted(toDelay:)``).
        public var preparation: Duration = .seconds(4)

        /// The defaults: held awake as the rules allow, the default budgets, 45 s for a fix.
        public init() {}

        /// These options with the preparation within logind's delay (`InhibitDelayMaxUSec`):
        /// at most four fifths of it, the rest the margin for the commit's end and the lock's
        /// release. logind suspends when its delay is over, prepared or not: a longer bound
        /// would only be cut, and what it cut is what the preparation is for.
        public func fitted(toDelay delay: Duration) -> Options {
            var fitted = self
            fitted.preparation = min(preparation, delay * 4 / 5)
            return fitted
        }
    }

    /// What the model says of an app: the service's own (unnamed), or one of a host's.
    public struct AppRules: Sendable, Equatable {
        /// The app's name under a host, as locks and `status` name it (`nil`: the service's own).
        public var app: String?
        /// Its state in the model.
        public var state: AppState
        /// Its location authorization.
        public var authorization: LocationAuthorization
        /// The background modes it declares: location with always holds the device awake
        /// whatever the session; the model's other reasons to let it run (a background task, the
        /// hybrid's audio) hold it only while the user's session is not inactive.
        public var backgroundModes: BackgroundModes
        /// Paused as stationary (the monitoring strategy's pause): its location sleeps too.
        public var isStationary: Bool

        /// An app's rules (`app`: its name under a host).
        public init(
            app: String? = nil, state: AppState, authorization: LocationAuthorization, backgroundModes: BackgroundModes = [.audio, .location],
            isStationary: Bool = false
        ) {
            self.app = app
            self.state = state
            self.authorization = authorization
            self.backgroundModes = backgroundModes
            self.isStationary = isStationary
        }
    }

    /// What happened; `now` is the boot clock's time.
    public enum Event: Sendable, Equatable {
        /// The service starts: the delay lock is taken.
        case started(now: Duration)
        /// The model's view of an app changed (a host's app that is not running is forgotten).
        case app(AppRules, now: Duration)
        /// The user's session changed.
        case session(SessionState, now: Duration)
        /// Work of this kind wants the device awake at `at` (`nil`: no longer).
        case wake(WakeKind, at: Duration?, now: Duration)
        /// logind announced a sleep (`PrepareForSleep(true)`).
        case sleepAnnounced(now: Duration)
        /// The preparation is done (or its time ran out).
        case prepared(now: Duration)
        /// logind announced the resume (`PrepareForSleep(false)`).
        case resumed(now: Duration)
        /// A wake's fix arrived.
        case fixArrived(now: Duration)
        /// What a wake's work delivered is delivered (or its time ran out).
        case workDone(now: Duration)
        /// A timer this machine asked for fired.
        case timerFired(now: Duration)
        /// The time the device has spent asleep since it booted (the boot clock less the
        /// monotonic one, which stops in a sleep), read when the kernel says it resumed and at
        /// the start. Grown while no sleep was announced, it is a sleep nobody announced (a
        /// suspend straight to the kernel: `rtcwake -m mem`, Sxmo's): told, its time a gap, the
        /// watch and delivery resumed, as for an announced one.
        case timeAsleep(total: Duration, now: Duration)
        /// logind's delay for a sleep's preparation (`InhibitDelayMaxUSec`), as it says at the
        /// connection and after its restart: the preparation fitted within it.
        case logindDelay(Duration)
    }

    /// What the executor does.
    public enum Action: Sendable, Equatable {
        /// Take the `block` lock, or keep it with a new reason.
        case holdAwake(reason: String)
        /// Release the `block` lock.
        case letSleep(reason: String)
        /// Take the `delay` lock (for the next sleep's preparation).
        case takeDelayLock
        /// Release it: the device sleeps.
        case releaseDelayLock
        /// Before a sleep: close the watch, commit the journal, give delivery at most `within`.
        case prepare(within: Duration)
        /// After a sleep of `asleep`: mark the gap, reopen the watch, deliver.
        case resume(asleep: Duration)
        /// Arm the wake alarm at `at` on the boot clock, for `kind`.
        case armAlarm(at: Duration, for: WakeKind)
        /// Disarm it.
        case disarmAlarm
        /// The device woke for `kind`: take a fix (the watch is open again) and run its work.
        case runWork(WakeKind)
        /// Deliver what waits now, and say ``Event/workDone(now:)``.
        case deliverNow
        /// Ask for the device's sleep now, if nobody used it since `wokeAt` (the wake's time on
        /// the boot clock): a wake of ours whose work is done.
        case sleepAgain(wokeAt: Duration)
        /// Call back with ``Event/timerFired(now:)`` at `at` (on the boot clock), replacing
        /// any timer asked for before.
        case scheduleTimer(at: Duration)
        /// What to say (JSON events, status, metrics).
        case say(SleepNotice)
    }

    /// A wake alarm: for which kind of work, at what time of the boot clock.
    public struct Alarm: Sendable, Equatable {
        /// The work it wakes the device for.
        public var kind: WakeKind
        /// When, on the boot clock.
        public var at: Duration
    }

    private enum Phase: Equatable {
        case awake
        /// Preparing a sleep announced at this time, the wake alarm already armed for `alarm`.
        case preparing(since: Duration, alarm: Alarm?)
        /// Asleep since this time, woken by `alarm` if one was armed.
        case asleep(since: Duration, alarm: Alarm?)
        /// Awake for a wake's work: waiting for a fix until `until`, then delivering.
        case working(WakeKind, fixed: Bool, until: Duration)
    }

    /// The shortest time from a sleep to its wake alarm.
    public static let alarmLead = Duration.seconds(5)

    /// The options in force: as given, the preparation fitted to logind's delay.
    public private(set) var options: Options
    /// The options as given.
    private let configured: Options
    private var phase = Phase.awake
    /// The apps the rules are about, by name (`""`: the service's own); the last one that changed.
    private var apps: [String: AppRules] = [:]
    private var changed = AppRules(state: .notRunning, authorization: .notDetermined)
    private var session = SessionState.none
    private var budgets: [WakeKind: WakeBudget]
    private var due: [WakeKind: Duration] = [:]
    /// The wake alarm armed now (`nil`: none).
    private var armed: Alarm?
    /// The wake whose work runs now: when it came (on the boot clock), and its kind's budget
    /// and due time as they were before it, which a sleep that comes before the work is done
    /// puts back.
    private var wake: (at: Duration, budget: WakeBudget?, due: Duration)?
    /// Why the `block` lock is held now (`nil`: not held).
    public private(set) var heldFor: String?
    /// The time asleep since boot when last read (`nil`: the next reading is the baseline, as
    /// after an announced resume, whose time asleep is already told).
    private var asleepSinceBoot: Duration?

    /// Whether the `delay` lock is held now: from the start and each resume until a sleep's
    /// preparation is done.
    public var holdsDelayLock: Bool {
        if case .asleep = phase { return false }
        return true
    }

    /// A machine with `options`, the device awake and no lock held.
    public init(options: Options = Options()) {
        self.options = options
        configured = options
        budgets = options.budgets
    }

    /// When each kind of work is next allowed to wake the device, as its budget stands at `now`.
    public func nextWake(of kind: WakeKind, from now: Duration) -> Duration? {
        guard let at = due[kind] else { return nil }
        return (budgets[kind] ?? kind.defaultBudget).nextWake(from: max(now, at))
    }

    /// What to do for `event`.
    public mutating func handle(_ event: Event) -> [Action] {
        switch event {
        case .logindDelay(let delay):
            let fitted = configured.fitted(toDelay: delay).preparation
            guard fitted != options.preparation else { return [] }
            options.preparation = fitted
            return fitted < configured.preparation ? [.say(.preparationFitted(fitted, delay: delay))] : []
        case .started(let now):
            for (kind, period) in options.every { due[kind] = now + period }
            return [.takeDelayLock] + hold() + keepArmed(now: now)
        case .app(let rules, let now):
            apps[rules.app ?? ""] = rules.state == .notRunning ? nil : rules
            changed = rules
            return hold() + keepArmed(now: now)  // authorized always or not: the poll may wake or not
        case .session(let state, _):
            let changed = state != session
            session = state
            return (changed ? [.say(.session(state))] : []) + hold()
        case .wake(let kind, let at, let now):
            due[kind] = at
            return keepArmed(now: now)
        case .sleepAnnounced(let now):
            return sleepAnnounced(now: now)
        case .prepared(let now):
            return prepared(now: now)
        case .resumed(let now):
            return resumed(now: now)
        case .fixArrived:
            guard case .working(let kind, false, let until) = phase else { return [] }
            phase = .working(kind, fixed: true, until: until)
            return [.deliverNow]
        case .workDone(let now):
            guard case .working(let kind, _, _) = phase else { return [] }
            return workEnded(kind, now: now, timedOut: false)
        case .timeAsleep(let total, let now):
            return timeAsleep(total: total, now: now)
        case .timerFired(let now):
            switch phase {
            case .preparing(let since, _) where now >= since + options.preparation:
                return prepared(now: now)
            case .preparing, .asleep:
                return alarmPassedBeforeTheSuspend(now: now)
            case .working(let kind, let fixed, let until) where now >= until:
                if !fixed {
                    // No fix in time: deliver what waits, then sleep.
                    phase = .working(kind, fixed: true, until: now + options.preparation)
                    return [.say(.noFix(kind, waited: options.fixWait)), .deliverNow, .scheduleTimer(at: now + options.preparation)]
                }
                return workEnded(kind, now: now, timedOut: true)
            default:
                return []
            }
        }
    }

    // MARK: Holding the device awake

    /// Why the rules hold the device awake now, if they do.
    private var reason: String? {
        // A wake's work is held until its fix is delivered, whatever else holds.
        if case .working(let kind, _, _) = phase { return "woken for \(kind.rawValue)" }
        guard options.holdsAwake, phase == .awake else { return nil }
        let held = apps.values.sorted { ($0.app ?? "") < ($1.app ?? "") }.compactMap { rules in
            reason(for: rules).map { why in rules.app.map { "\($0): \(why)" } ?? why }
        }
        return held.isEmpty ? nil : held.joined(separator: "; ")
    }

    /// Why one app holds the device awake, if it does.
    private func reason(for rules: AppRules) -> String? {
        guard rules.state != .notRunning, rules.state != .suspended, !rules.isStationary else { return nil }
        if rules.authorization == .always, rules.backgroundModes.contains(.location) {
            return "location always"
        }
        // Otherwise while the model lets it run (a background task, the hybrid's audio): never
        // once the user's session is inactive.
        guard session != .inactive else { return nil }
        return "\(rules.authorization.rawValue) while \(rules.app == nil ? "the app runs" : "it runs"), session \(session.rawValue)"
    }

    /// Takes, keeps or releases the `block` lock as ``reason`` says; `ended` is why a lock
    /// held for a wake's work is released.
    private mutating func hold(ended: String? = nil) -> [Action] {
        let wanted = reason
        guard wanted != heldFor else { return [] }
        heldFor = wanted
        if let wanted { return [.holdAwake(reason: wanted)] }
        return [.letSleep(reason: ended ?? released)]
    }

    /// Why the rules no longer hold the device awake: what the app that changed last became.
    private var released: String {
        let app = changed.app ?? "the app"
        return switch (changed.state, changed.isStationary, session) {
        case (.suspended, _, _): "the model suspended \(app)"
        case (.notRunning, _, _): "\(app) is not running"
        case (_, true, _): "\(app) is stationary"
        case (_, _, .inactive): "the session is inactive (\(changed.authorization.rawValue))"
        default: "released"
        }
    }

    // MARK: Sleep and resume

    private mutating func sleepAnnounced(now: Duration) -> [Action] {
        switch phase {
        case .preparing, .asleep: return []
        case .awake, .working: break
        }
        let interrupted = interruptWork()
        // Armed before anything else: a system whose delay is shorter than the preparation
        // suspends without waiting for it, and must still wake for the work.
        let alarm = nextAlarm(from: now)
        phase = .preparing(since: now, alarm: alarm)
        let rearm = setArmed(alarm, now: now)
        var actions: [Action] = interrupted + [.say(.sleepAnnounced(heldFor: heldFor))] + rearm
        if heldFor != nil {
            heldFor = nil
            actions.append(.letSleep(reason: "the device goes to sleep"))
        }
        return actions + [.prepare(within: options.preparation), .scheduleTimer(at: now + options.preparation)]
    }

    /// A sleep came during a wake's work. Before its fix (the work, its app's task, not done):
    /// the work stays due at its time and its wake is not counted, so that the next alarm wakes
    /// the device for it again, not a budget's period later.
    private mutating func interruptWork() -> [Action] {
        defer { wake = nil }
        guard case .working(let kind, false, _) = phase, let before = wake else { return [] }
        budgets[kind] = before.budget
        due[kind] = min(due[kind] ?? before.due, before.due)
        return [.say(.workInterrupted(kind))]
    }

    private mutating func prepared(now: Duration) -> [Action] {
        guard case .preparing = phase else { return [] }
        phase = .asleep(since: now, alarm: armed)
        // Armed again only if the alarm the sleep needs moved (its lead is counted from now).
        return rearmForSleep(now: now) + [.releaseDelayLock]
    }

    /// While a sleep is prepared or under way: the alarm it needs, armed again if it moved (its
    /// lead counted from `now`).
    private mutating func rearmForSleep(now: Duration) -> [Action] {
        let alarm = nextAlarm(from: now)
        guard alarm != armed else { return [] }
        switch phase {
        case .preparing(let since, _): phase = .preparing(since: since, alarm: alarm)
        case .asleep(let since, _): phase = .asleep(since: since, alarm: alarm)
        case .awake, .working: break
        }
        return setArmed(alarm, now: now)
    }

    /// The alarm kept armed for the earliest work due, whatever the device does next: armed
    /// (or disarmed) when it changes. While awake, work due within the shortest sleep is left
    /// to the announcement (armed then with its lead): armed now, it would only expire.
    private mutating func keepArmed(now: Duration) -> [Action] {
        switch phase {
        case .preparing, .asleep: return rearmForSleep(now: now)
        case .awake, .working: break
        }
        let alarm = nextAlarm(from: now)
        guard alarm != armed else { return [] }
        if let alarm, alarm.at <= now + Self.alarmLead { return [] }
        return setArmed(alarm, now: now)
    }

    /// The earliest wake the budgets allow for a sleep beginning at `now`. The hybrid's poll
    /// wakes the device only when authorized always, as iOS allows it. At least `alarmLead`
    /// after the sleep begins: the kernel refuses to suspend for an alarm due within 2 s, and
    /// work already due waits for the shortest sleep.
    private func nextAlarm(from now: Duration) -> Alarm? {
        let always = apps.values.contains { $0.authorization == .always }
        return options.wakes.filter { $0 != .poll || always }
            .compactMap { kind in nextWake(of: kind, from: now).map { Alarm(kind: kind, at: max($0, now + Self.alarmLead)) } }
            .min { ($0.at, $0.kind.rawValue) < ($1.at, $1.kind.rawValue) }  // ties: the same kind each time
    }

    /// Arms `alarm` (for none, disarms the one armed) and keeps it as the one armed. While a
    /// sleep is on its way, with a timer at its time: an alarm that expires before the kernel
    /// suspends wakes nothing (``alarmPassedBeforeTheSuspend(now:)``).
    private mutating func setArmed(_ alarm: Alarm?, now: Duration) -> [Action] {
        defer { armed = alarm }
        guard let alarm else { return armed == nil ? [] : [.disarmAlarm] }
        let armed: [Action] = [.armAlarm(at: alarm.at, for: alarm.kind), .say(.alarmArmed(alarm.kind, in: alarm.at - now))]
        switch phase {
        case .preparing, .asleep: return armed + [.scheduleTimer(at: alarm.at)]
        case .awake, .working: return armed
        }
    }

    /// The alarm's time came while a sleep was still on its way: a loaded system can take
    /// seconds from the preparation to the kernel's suspend, and an alarm that expires before it
    /// wakes nothing (the device then sleeps until something else wakes it, its work's time
    /// past). Armed again `alarmLead` from now (within 2 s of it the kernel refuses to suspend);
    /// the sleep keeps the alarm it was armed for, so whatever ends it, that work is due.
    private mutating func alarmPassedBeforeTheSuspend(now: Duration) -> [Action] {
        guard let alarm = armed, now >= alarm.at else { return [] }
        return setArmed(Alarm(kind: alarm.kind, at: now + Self.alarmLead), now: now)
    }

    private mutating func resumed(now: Duration) -> [Action] {
        let since: Duration
        let alarm: Alarm?
        switch phase {
        case .asleep(let start, let armed): (since, alarm) = (start, armed)
        case .preparing(let start, let armed): (since, alarm) = (start, armed)  // the sleep did not wait for us
        case .awake, .working: return []
        }
        asleepSinceBoot = nil  // this sleep's time is told here, not again at the next reading
        let (hold, work) = woke(alarm: alarm, now: now)
        let resume: [Action] = [.takeDelayLock, .resume(asleep: now - since), .say(.resumed(asleep: now - since))]
        return [.disarmAlarm] + hold + resume + work + keepArmed(now: now)
    }

    /// The shortest sleep told as one when nobody announced it (shorter, nothing was missed).
    public static let unannouncedMinimum = Duration.seconds(1)

    /// A reading of the time asleep since boot: grown by ``unannouncedMinimum`` or more while
    /// no sleep was announced, the device slept unannounced. The delay lock is still held (no
    /// preparation released it): the resume is the same as an announced one's otherwise.
    private mutating func timeAsleep(total: Duration, now: Duration) -> [Action] {
        defer { asleepSinceBoot = total }
        guard let before = asleepSinceBoot, total - before >= Self.unannouncedMinimum else { return [] }
        switch phase {
        case .preparing, .asleep: return []  // announced: its resume tells it
        case .awake, .working: break
        }
        let asleep = total - before
        let interrupted = interruptWork()
        let (hold, work) = woke(alarm: armed, now: now)
        let resume: [Action] = [.resume(asleep: asleep), .say(.sleptUnannounced(asleep: asleep))]
        return interrupted + [.disarmAlarm] + hold + resume + work + keepArmed(now: now)
    }

    /// The device is awake again: for `alarm`'s work if it was the cause (within a second of its
    /// time, the RTC's resolution, or later). The block lock as the rules now say, to be taken
    /// first: the device is held for the work before the slower steps of the resume (a loaded
    /// system's user or idle action may suspend it again within seconds); then the work, after
    /// the resume's steps (the gap comes before the wake's first fix).
    private mutating func woke(alarm: Alarm?, now: Duration) -> (hold: [Action], work: [Action]) {
        var work: [Action] = []
        // The alarm's wake: within a second of its time (the RTC's resolution), or later.
        if let alarm, now + .seconds(1) >= alarm.at {
            let kind = alarm.kind
            wake = (now, budgets[kind], due[kind] ?? alarm.at)
            budgets[kind, default: kind.defaultBudget].spend(at: now)
            due[kind] = options.every[kind].map { now + $0 }
            phase = .working(kind, fixed: false, until: now + options.fixWait)
            work = [.say(.woke(kind, late: max(.zero, now - alarm.at))), .runWork(kind), .scheduleTimer(at: now + options.fixWait)]
        } else {
            phase = .awake
        }
        armed = nil
        return (hold(), work)
    }

    private mutating func workEnded(_ kind: WakeKind, now: Duration, timedOut: Bool) -> [Action] {
        phase = .awake
        let wokeAt = wake?.at
        wake = nil
        let actions = [.say(.workEnded(kind, timedOut: timedOut))] + hold(ended: "done: woken for \(kind.rawValue)") + keepArmed(now: now)
        // Back to sleep at once, as a phone does when its last wakelock goes: only a wake of
        // ours, with nothing of the rules holding the device and the user's session not in
        // front (whether anyone used the device since the wake is the executor's to ask).
        guard options.sleepsAfterWork, heldFor == nil, session != .active, let wokeAt else { return actions }
        return actions + [.sleepAgain(wokeAt: wokeAt)]
    }
}
