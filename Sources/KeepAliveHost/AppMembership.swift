import KeepAliveCore

/// The host's app groups, readable from any thread: which app a process belongs to, for the
/// control sockets' limits (they count an app's connections against it, frozen or not).
final class AppMembership: Sendable {
    private let groups = Locked<[String: AppProcessGroup]>([:])

    /// Adds (or replaces) an app's group.
    func add(_ group: AppProcessGroup) { groups.withLock { $0[group.app] = group } }

    /// The app whose group holds `pid`, if any.
    func app(of pid: Int32) -> String? {
        groups.read { groups in groups.values.first { $0.contains(pid) }?.app }
    }
}
