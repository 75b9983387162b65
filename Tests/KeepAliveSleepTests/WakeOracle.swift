import KeepAliveCore
import KeepAliveSleep

/// What is due, kept apart from ``DeviceSleepMachine``: the rules of issue 66 and 83 written
/// again from what the machine is told and what it does (the work it starts, the sleeps that
/// cut a work short), so that the property test checks the machine's alarm against them.
struct WakeOracle {
    var every: [WakeKind: Duration]
    var wakes: Set<WakeKind>
    var budgets: [WakeKind: WakeBudget]
    var due: [WakeKind: Duration] = [:]
    /// Each running app's authorization, by name.
    var authorizations: [String: LocationAuthorization] = [:]
    /// The work running: its kind, its budget and due time before it, whether its fix came.
    var running: (kind: WakeKind, budget: WakeBudget?, due: Duration, fixed: Bool)?

    init(options: DeviceSleepMachine.Options) {
        every = options.every
        wakes = options.wakes
        budgets = options.budgets
    }

    /// The earliest time work of `kind` may run: its due time, or later as its budget allows;
    /// `nil` when none is due or it may not wake the device (the poll, without always).
    func earliest(_ kind: WakeKind) -> Duration? {
        guard wakes.contains(kind), kind != .poll || authorizations.values.contains(.always), let at = due[kind] else { return nil }
        return (budgets[kind] ?? kind.defaultBudget).nextWake(from: at)
    }

    /// The earliest work due, if any.
    var earliest: (kind: WakeKind, at: Duration)? {
        WakeKind.allCases.compactMap { kind in earliest(kind).map { (kind, $0) } }.min { $0.1 < $1.1 }
    }

    mutating func started(now: Duration) {
        for (kind, period) in every { due[kind] = now + period }
    }

    mutating func app(_ rules: DeviceSleepMachine.AppRules) {
        authorizations[rules.app ?? ""] = rules.state == .notRunning ? nil : rules.authorization
    }

    mutating func budget(_ kind: WakeKind, _ budget: WakeBudget?) {
        guard let budget else {
            wakes.remove(kind)
            return
        }
        wakes.insert(kind)
        var current = budgets[kind] ?? budget
        current.burst = budget.burst
        current.interval = budget.interval
        budgets[kind] = current
    }

    /// Work of `kind` starts: spent, due again after its period.
    mutating func workStarted(_ kind: WakeKind, now: Duration) {
        running = (kind, budgets[kind], due[kind] ?? now, false)
        budgets[kind, default: kind.defaultBudget].spend(at: now)
        due[kind] = every[kind].map { now + $0 }
    }

    mutating func fixed() { running?.fixed = true }

    mutating func workEnded() { running = nil }

    /// A sleep came: work whose fix had not come is not counted, and stays due (at its time, or
    /// at its start when it had none).
    mutating func sleepCame() {
        defer { running = nil }
        guard let work = running, !work.fixed else { return }
        budgets[work.kind] = work.budget
        due[work.kind] = min(due[work.kind] ?? work.due, work.due)
    }
}
