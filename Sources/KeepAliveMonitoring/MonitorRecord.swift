/// What a monitor holds for one identifier: `CLMonitor.Record`.
public struct MonitorRecord: Sendable, Hashable, Codable {
    /// The condition, as added.
    public var condition: MonitorCondition
    /// Its state now: the last event's, or the one assumed when it was added.
    public var state: MonitorState
    /// The last event, if there has been one.
    public var lastEvent: MonitorEvent?

    /// A record of `condition` in `state`.
    public init(condition: MonitorCondition, state: MonitorState, lastEvent: MonitorEvent? = nil) {
        self.condition = condition
        self.state = state
        self.lastEvent = lastEvent
    }
}
