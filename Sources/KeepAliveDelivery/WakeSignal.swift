import KeepAliveCore

/// Wakes a waiting deliverer early: new records were appended, or the server is reachable again.
/// The reasons raised and not yet taken, as an ``ObservedState``.
final class WakeSignal: Sendable {
    enum Reason: Sendable, Hashable {
        case appended
        case reachable
    }

    private let pending = ObservedState<Set<Reason>>([])

    func raise(_ reason: Reason) {
        pending.update { $0.insert(reason) }
    }

    /// Waits until one of `reasons` is raised (one raised before counts) or `timeout` passes on
    /// `time`'s clock, and takes it; `nil` on a timeout or cancellation.
    func wait(for reasons: Set<Reason>, timeout: Duration, time: TimeSource) async -> Reason? {
        guard await pending.wait(until: { !$0.isDisjoint(with: reasons) }, timeout: timeout, time: time) else { return nil }
        return pending.update { pending in pending.first(where: reasons.contains).map { pending.remove($0)! } }
    }
}
