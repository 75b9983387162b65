/// The thresholds a monitor decides by; the defaults are explained in "Monitoring regions,
/// significant changes and visits".
public struct MonitoringRules: Sendable, Hashable, Codable {
    /// Fixes whose horizontal accuracy (95%) is worse than this many metres, or unknown, or
    /// without a 2D or 3D position, count for nothing. Default 100 m: worse is a receiver that
    /// has barely a fix, and would hold every decision off anyway.
    public var maximumAccuracy: Double = 100
    /// A region's state changes when every fix for this long has had its whole accuracy circle
    /// on the new side. Default 20 s, as iOS waits: a receiver resting on the edge, whose error
    /// wanders as far as its 95% accuracy, stays across that long rarely (see the article).
    public var confirmingInterval: Duration = .seconds(20)
    /// ...or sooner, when this many of those fixes lie beyond the edge by twice their accuracy:
    /// a device moving away. Default 2 (two epochs). Visits and stationary detection end a stay
    /// after this many fixes in a row wholly outside it.
    public var confirmingFixes: Int = 2
    /// A significant change: at least this many metres, surely (the distance less both fixes'
    /// accuracies). Default 500 m, as iOS documents.
    public var significantDistance: Double = 500
    /// A significant change: at most one event per this long. Default 5 minutes, as iOS documents.
    public var significantInterval: Duration = .seconds(300)
    /// A visit: the fixes of a stay lie within this many metres of their centre. Default 100 m.
    public var visitRadius: Double = 100
    /// A visit: the stay has lasted this long before it counts as an arrival. Default 5 minutes.
    public var visitDwell: Duration = .seconds(300)
    /// Stationary: the fixes lie within this many metres of their centre... Default 25 m.
    public var stationaryRadius: Double = 25
    /// ...for this long. Default 2 minutes.
    public var stationaryDwell: Duration = .seconds(120)
    /// The odometer adds a step when the fix has moved from the last counted position by more
    /// than both fixes' accuracies (and, when the receiver reports speed, is moving at least
    /// ``movingSpeed``), so a receiver at rest adds nothing.
    public var movingSpeed: Double = 0.5

    /// The defaults.
    public init() {}

    /// Throws ``MonitoringError/Code/invalidCondition`` for a threshold that cannot work.
    public func validate() throws(MonitoringError) {
        let distances = [
            ("maximum accuracy", maximumAccuracy), ("significant distance", significantDistance),
            ("visit radius", visitRadius), ("stationary radius", stationaryRadius),
        ]
        for (name, value) in distances where !(value.isFinite && value > 0) {
            throw .invalidCondition("the \(name) must be a positive number of metres, not \(value)")
        }
        guard movingSpeed.isFinite, movingSpeed >= 0 else {
            throw .invalidCondition("the moving speed must be zero or more metres per second, not \(movingSpeed)")
        }
        guard (1...100).contains(confirmingFixes) else {
            throw .invalidCondition("the confirming fixes must be from 1 to 100, not \(confirmingFixes)")
        }
        let durations = [
            ("confirming interval", confirmingInterval), ("significant interval", significantInterval),
            ("visit dwell", visitDwell), ("stationary dwell", stationaryDwell),
        ]
        for (name, value) in durations
        where value < .zero {
            throw .invalidCondition("the \(name) must not be negative")
        }
    }
}
