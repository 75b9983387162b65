import FoundationEssentials
import KeepAliveCore
import KeepAliveHostProtocol
import KeepAliveMonitoring

/// The monitoring strategy's conditions while the service runs: the app's own (from
/// `--conditions` and waypoints, changed by remote commands) and the reporting mode, which
/// decides what the monitor watches and which fixes are journaled (see ``ReportingMode``).
final class ServiceConditions: Sendable {
    /// The identifier of the significant-change condition that significant mode adds.
    static let significantChange = "significant-change"

    let monitoring: ServiceMonitoring
    /// Standalone: the service's own monitor; under the host, `nil`.
    let ownMonitor: LocationMonitor?
    /// Under the host: who watches for the app.
    let host: HostClient?
    private let state: Locked<State>

    private struct State {
        var regions: [String: MonitorCondition]
        var mode: ReportingMode?
        /// The last fix journaled: where move mode measures from, and how an event's fix
        /// journaled already by the watch is known.
        var lastJournaled: Location?
    }

    init(_ monitoring: ServiceMonitoring, mode: ReportingMode?, ownMonitor: LocationMonitor?, host: HostClient?) {
        self.monitoring = monitoring
        self.ownMonitor = ownMonitor
        self.host = host
        state = Locked(State(regions: monitoring.conditions, mode: mode))
    }

    /// The reporting mode now (`nil`: every fix of the watch is journaled).
    var mode: ReportingMode? { state.withLock { $0.mode } }

    /// What the monitor watches for `regions` in `mode`.
    static func watched(_ regions: [String: MonitorCondition], in mode: ReportingMode?) -> [String: MonitorCondition] {
        switch mode?.kind {
        case .quiet?: [:]
        case .significant?: regions.merging([significantChange: .significantChange]) { mine, _ in mine }
        case .manual?, .move?, nil: regions
        }
    }

    /// Gives the monitor (the service's own, or the host's) what `regions` and `mode` watch.
    func apply() async throws {
        let (regions, mode) = state.withLock { ($0.regions, $0.mode) }
        try await apply(regions, mode)
    }

    private func apply(_ regions: [String: MonitorCondition], _ mode: ReportingMode?) async throws {
        let watched = Self.watched(regions, in: mode)
        if let ownMonitor {
            try ownMonitor.update(to: watched, assuming: monitoring.assuming)
        } else if let host {
            try await monitoring.register(watched, with: host)
        }
    }

    /// Removes the conditions of `removing`, then adds `adding`; nothing changes if the monitor
    /// refuses them. Callers take turns (one command at a time).
    func change(removing: Set<String>, adding: [String: MonitorCondition]) async throws {
        let (current, mode) = state.withLock { ($0.regions, $0.mode) }
        var next = current
        for identifier in removing { next[identifier] = nil }
        for (identifier, condition) in adding {
            guard identifier != Self.significantChange, next.updateValue(condition, forKey: identifier) == nil else {
                throw MonitoringError(.invalidCondition, "\(identifier) is the identifier of another condition")
            }
        }
        try await apply(next, mode)
        state.withLock { $0.regions = next }
    }

    /// Reports in `mode` from now on: the monitor watches what it needs.
    func setMode(_ mode: ReportingMode) async throws {
        try mode.validate()
        if mode.kind == .move, ownMonitor == nil {
            throw MonitoringModeError("move mode keeps the app watching, and under --host the host watches for it (frozen): use significant or manual")
        }
        let regions = state.withLock { $0.regions }
        try await apply(regions, mode)
        state.withLock { $0.mode = mode }
    }

    /// Whether a fix of the watch is journaled: every one without a mode, in move mode one
    /// that moved the displacement or came the interval after the last journaled, else none
    /// (an event's fix is journaled with the event: ``journalsWithEvent(_:)``).
    func journals(_ fix: Location) -> Bool {
        state.withLock { state in
            switch state.mode?.kind {
            case nil: break
            case .move?:
                let mode = state.mode!
                if let last = state.lastJournaled {
                    let moved = fix.distance(from: last) >= mode.displacement
                    // On the fixes' own times; a fix without one has not waited.
                    let waited = fix.timestamp.flatMap { now in last.timestamp.map { now.timeIntervalSince($0) } }
                        .map { $0 >= Double(mode.interval.components.seconds) } ?? false
                    guard moved || waited else { return false }
                }
            case .quiet?, .manual?, .significant?: return false
            }
            state.lastJournaled = fix
            return true
        }
    }

    /// Whether an event's fix must be journaled before the event (the watch did not, or the
    /// host told the event).
    func journalsWithEvent(_ fix: Location) -> Bool {
        state.withLock { state in
            guard state.lastJournaled != fix else { return false }
            state.lastJournaled = fix
            return true
        }
    }

    /// A fix journaled beside the watch (one asked for): move mode measures from it.
    func journaled(_ fix: Location) {
        state.withLock { $0.lastJournaled = fix }
    }
}
