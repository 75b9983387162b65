public import FoundationEssentials
public import KeepAliveCore

/// A condition's state: `CLMonitor.Event.State`.
public enum MonitorState: String, Sendable, Hashable, Codable, CustomStringConvertible {
    /// Not yet decided: no fix has settled it.
    case unknown
    /// Inside the region; at a place; (significant change) moved.
    case satisfied
    /// Outside the region; left the place.
    case unsatisfied

    /// `satisfied`, `unsatisfied`, `unknown`.
    public var description: String { rawValue }
}

/// A stay at one place: `CLVisit`.
public struct Visit: Sendable, Hashable, Codable {
    /// The centre of the fixes of the stay.
    public var coordinate: Coordinate
    /// How far from ``coordinate`` the stay's fixes lay, at most, in metres.
    public var radius: Double
    /// The time of the stay's first fix.
    public var arrival: Date
    /// The time of its last fix within ``MonitoringRules/visitRadius`` of the place; `nil` while
    /// still there (CoreLocation's `distantFuture`).
    public var departure: Date?

    /// A stay at `coordinate` from `arrival` until `departure`.
    public init(coordinate: Coordinate, radius: Double, arrival: Date, departure: Date? = nil) {
        self.coordinate = coordinate
        self.radius = radius
        self.arrival = arrival
        self.departure = departure
    }
}

/// A condition changed state: `CLMonitor.Event`.
public struct MonitorEvent: Sendable, Hashable, Codable {
    /// The condition's identifier, as added.
    public var identifier: String
    /// Its new state.
    public var state: MonitorState
    /// When: the receiver's time of the fix that decided it.
    public var date: Date
    /// The fix that decided it.
    public var location: Location
    /// For a visit condition: the stay that began or ended.
    public var visit: Visit?
    /// The condition as it was when the event was told (a region's name with it), where known:
    /// a ``LocationMonitor`` sets it; an event journaled before it did has none.
    public var condition: MonitorCondition?

    /// An event for `identifier`.
    public init(
        identifier: String, state: MonitorState, date: Date, location: Location, visit: Visit? = nil,
        condition: MonitorCondition? = nil
    ) {
        self.identifier = identifier
        self.state = state
        self.date = date
        self.location = location
        self.visit = visit
        self.condition = condition
    }
}
