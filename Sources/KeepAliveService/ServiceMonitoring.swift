public import FoundationEssentials
public import KeepAliveMonitoring
import KeepAliveHostProtocol

/// What the monitoring strategy (``KeepAliveStrategyKind/monitoring``) watches, and who watches it.
///
/// The app keeps nothing alive: in the background it is suspended (frozen under the host), and
/// each event of its conditions wakes it for the profile's event budget, recorded in the journal
/// with the fixes. Standalone the service's own ``LocationMonitor`` watches the location manager
/// (with the stationary pause); under `keepalive host` the host watches for the app, also while
/// it is frozen or not running, and the service only registers the conditions.
public struct ServiceMonitoring: Sendable {
    /// The conditions, by identifier: the app's whole set (any other is removed).
    public let conditions: [String: MonitorCondition]
    /// The state a newly added condition starts in (`.unsatisfied`: no event until entered).
    public let assuming: MonitorState
    /// Standalone: the service's own monitor, holding exactly ``conditions``; `nil` under the host.
    public let monitor: LocationMonitor?
    /// Standalone: the watch is left while stationary (`nil` watches throughout, as for a replay).
    public let pause: StationaryPause?

    /// The service watches `conditions` itself, keeping their states and last events in `file`
    /// (in memory when `nil`), so a restart tells no second entry.
    ///
    /// - Throws: ``MonitoringError`` for a bad condition or a damaged file (named, left as it is).
    public static func standalone(
        _ conditions: [String: MonitorCondition],
        assuming: MonitorState = .unknown,
        file: URL? = nil,
        pausing pause: StationaryPause? = StationaryPause()
    ) throws(MonitoringError) -> ServiceMonitoring {
        let monitor = try LocationMonitor(named: "keepalive", file: file)
        try monitor.update(to: conditions, assuming: assuming)
        return ServiceMonitoring(conditions: conditions, assuming: assuming, monitor: monitor, pause: pause)
    }

    /// The host watches `conditions` for the app (registered after `hello`; they need location
    /// authorized always, or when in use while in the foreground).
    ///
    /// - Throws: ``MonitoringError`` for a bad condition, before anything reaches the host.
    public static func hosted(
        _ conditions: [String: MonitorCondition],
        assuming: MonitorState = .unknown
    ) throws(MonitoringError) -> ServiceMonitoring {
        try LocationMonitor(named: "check").add(conditions)  // the host's own checks, said here first
        return ServiceMonitoring(conditions: conditions, assuming: assuming, monitor: nil, pause: nil)
    }

    /// Gives the host exactly `conditions` (by default ``conditions``) for this app: adds those
    /// it lacks (in ``assuming``), and removes those it has beyond them.
    func register(_ conditions: [String: MonitorCondition]? = nil, with client: HostClient) async throws(HostError) {
        let conditions = conditions ?? self.conditions
        let held = try await client.monitor(conditions, assuming: assuming)
        let extra = Set(held).subtracting(conditions.keys)
        if !extra.isEmpty { try await client.stopMonitoring(extra.sorted()) }
    }
}
