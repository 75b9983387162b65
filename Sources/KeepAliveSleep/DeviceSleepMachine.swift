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
///   strategy's check, the hybrid's poll when authorized always) is always armed for: whenever
///   any is due, the wake alarm is armed, in the future, for the earliest time its kind's
///   ``WakeBudget`` allows (at least ``alarmLead`` ahead: the kernel refuses a suspend whose
///   alarm is due within 2 s). That holds after every event: an alarm whose time comes while the
///   device is awake runs its work then (the device awake anyway: held for the work, never put
///   back to sleep after it) and arms the next; a sleep nobody announces (`rtcwake -m mem`,
///   Sxmo's suspend) therefore always finds an alarm armed. A wake of ours holds the device
///   awake for its work (a fix, at most ``Options/fixWait``, then its delivery) and lets it
///   sleep again.
///
/// One timer (``Action/scheduleTimer(at:)``) is asked for at a time: the earliest of what the
/// machine waits for (the work due next while awake, a wake's bound, a preparation's bound, an
/// alarm that must not expire before the kernel suspends).
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
        /// How often work of this kind may wake the device changed (`nil`: it no longer may);
        /// the wakes it already made still count against the new budget.
        case budget(WakeKind, WakeBudget?, now: Duration)
        /// logind announced a sleep (`PrepareForSleep(true)`).
        case sleepAnnounced(now: Duration)
        /// The preparation is done (or its time ran out).
        case prepared(now: Duration)
        /// logind announced the resume (`PrepareForSleep(false)`).
        case resumed(now: Duration)
        /// A wake's fix arrived.
        case fixArrived(now: Duration)
        /// A wake's work gave up on its fix before the machine's bound (its wait followed the
        /// receiver's measured start): no fix, what waits is delivered, and the device sleeps.
        case fixGivenUp(now: Duration)
        /// What a wake's work delivered is delivered (or its time ran out).
        case workDone(now: Duration)
        /// A timer this machine asked for fired.
        case timerFired(now: Duration)
        /// The time the device has spent asleep since it booted (the boot clock less the
        /// monotonic one, which stops in a sleep), read when the kernel says it resumed, at the
        /// start, and before each timer: grown while no sleep was announced, it is a sleep
        /// nobody announced (a suspend straight to the kernel: `rtcwake -m mem`, Sxmo's): told,
        /// its time a gap, the watch and delivery resumed, as for an announced one.
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
        /// Work of `kind` is due (the device woke for it, or was awake at its time): take a fix
        /// (the watch is open) and run its work.
        case runWork(WakeKind)
        /// Deliver what waits now, and say ``Event/workDone(now:)``.
        case deliverNow
        /// Ask for the device's sleep now, if nobody used it since `wokeAt` (the wake's time on
        /// the boot clock) and nobody else holds it: a wake of ours whose work is done.
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

        /// An alarm for `kind` at `at` on the boot clock.
        public init(kind: WakeKind, at: Duration) {
            self.kind = kind
            self.at = at
        }
    }

    enum Phase: Equatable {
        case awake
        /// Preparing a sleep announced at this time, the wake alarm already armed for `alarm`.
        case preparing(since: Duration, alarm: Alarm?)
        /// Asleep since this time, woken by `alarm` if one was armed.
        case asleep(since: Duration, alarm: Alarm?)
        /// Awake for work that is due: waiting for a fix until `until`, then delivering.
        case working(WakeKind, fixed: Bool, until: Duration)
    }

    /// The work running now: since when, whether the device woke for it (and when: the time a
    /// back-to-sleep asks about), and its kind's budget and due time as they were before it,
    /// which a sleep that comes before its fix puts back.
    struct Work {
        var wokeAt: Duration?
        var budget: WakeBudget?
        var due: Duration
    }

    /// The shortest time from a sleep to its wake alarm.
    public static let alarmLead = Duration.seconds(5)

    /// The options in force: as given, the preparation fitted to logind's delay, the budgets
    /// as last changed.
    public internal(set) var options: Options
    /// The options as given.
    let configured: Options
    var phase = Phase.awake
    /// The apps the rules are about, by name (`""`: the service's own); the last one that changed.
    var apps: [String: AppRules] = [:]
    var changed = AppRules(state: .notRunning, authorization: .notDetermined)
    var session = SessionState.none
    var budgets: [WakeKind: WakeBudget]
    var due: [WakeKind: Duration] = [:]
    /// The wake alarm armed now (`nil`: none).
    public internal(set) var armed: Alarm?
    /// The timer asked for now (`nil`: none, or it fired).
    var timer: Duration?
    /// The work running now.
    var work: Work?
    /// Why the `block` lock is held now (`nil`: not held).
    public internal(set) var heldFor: String?
    /// The time asleep since boot when last read (`nil`: the next reading is the baseline, as
    /// after an announced resume, whose time asleep is already told).
    var asleepSinceBoot: Duration?

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
            return [.takeDelayLock] + hold() + settle(now: now)
        case .app(let rules, let now):
            apps[rules.app ?? ""] = rules.state == .notRunning ? nil : rules
            changed = rules
            return hold() + settle(now: now)  // authorized always or not: the poll may wake or not
        case .session(let state, let now):
            let changed = state != session
            session = state
            return (changed ? [.say(.session(state))] : []) + hold() + settle(now: now)
        case .wake(let kind, let at, let now):
            due[kind] = at
            return settle(now: now)
        case .budget(let kind, let budget, let now):
            changeBudget(of: kind, to: budget)
            return settle(now: now)
        case .sleepAnnounced(let now):
            return sleepAnnounced(now: now) + settle(now: now)
        case .prepared(let now):
            return prepared(now: now) + settle(now: now)
        case .resumed(let now):
            return resumed(now: now) + settle(now: now)
        case .fixArrived(let now):
            guard case .working(let kind, false, let until) = phase else { return [] }
            phase = .working(kind, fixed: true, until: until)
            return [.deliverNow] + settle(now: now)
        case .fixGivenUp(let now):
            guard case .working(let kind, false, let until) = phase else { return [] }
            return noFix(kind, waited: now - (until - options.fixWait), now: now)
        case .workDone(let now):
            guard case .working(let kind, _, _) = phase else { return [] }
            return workEnded(kind, now: now, timedOut: false)
        case .timeAsleep(let total, let now):
            return timeAsleep(total: total, now: now) + settle(now: now)
        case .timerFired(let now):
            if let timer, now >= timer { self.timer = nil }
            return timerFired(now: now)
        }
    }

    /// No fix in time (`waited`): deliver what waits, then the device may sleep.
    private mutating func noFix(_ kind: WakeKind, waited: Duration, now: Duration) -> [Action] {
        phase = .working(kind, fixed: true, until: now + options.preparation)
        return [.say(.noFix(kind, waited: waited)), .deliverNow] + settle(now: now)
    }

    private mutating func timerFired(now: Duration) -> [Action] {
        switch phase {
        case .preparing(let since, _) where now >= since + options.preparation:
            return prepared(now: now) + settle(now: now)
        case .preparing, .asleep:
            return alarmPassedBeforeTheSuspend(now: now) + settle(now: now)
        case .working(let kind, let fixed, let until) where now >= until:
            guard fixed else { return noFix(kind, waited: options.fixWait, now: now) }
            return workEnded(kind, now: now, timedOut: true)
        case .awake, .working:
            return settle(now: now)  // work come due, or an alarm to arm again
        }
    }

    /// A kind's budget changed: its wakes so far still count against the new one.
    private mutating func changeBudget(of kind: WakeKind, to budget: WakeBudget?) {
        guard let budget else {
            options.wakes.remove(kind)
            return
        }
        options.wakes.insert(kind)
        options.budgets[kind] = budget
        var current = budgets[kind] ?? budget
        current.burst = budget.burst
        current.interval = budget.interval
        budgets[kind] = current
    }

    // MARK: Holding the device awake

    /// Why the rules hold the device awake now, if they do.
    private var reason: String? {
        if case .working(let kind, _, _) = phase {
            // A wake's work is held until its fix is delivered, whatever else holds; work due
            // while awake, by the rules' own reason if they hold the device anyway.
            guard work?.wokeAt == nil else { return "woken for \(kind.rawValue)" }
            return rulesReason ?? "work for \(kind.rawValue), due while awake"
        }
        return phase == .awake ? rulesReason : nil
    }

    /// Why the apps' rules hold the device awake, if they do.
    private var rulesReason: String? {
        guard options.holdsAwake else { return nil }
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
    mutating func hold(ended: String? = nil) -> [Action] {
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
}
