import FoundationEssentials
import KeepAliveCore

/// A fix that counts for the monitor's decisions, with what they use of it.
struct CountedFix: Sendable {
    /// The fix as received.
    var location: Location
    /// Its position.
    var point: Coordinate
    /// Its horizontal accuracy (95%) in metres.
    var accuracy: Double
    /// The receiver's time.
    var date: Date

    /// `location` if it counts under `rules`: a 2D or 3D position with the receiver's time,
    /// whose accuracy is known and at most ``MonitoringRules/maximumAccuracy``. Every decision
    /// is timed by the receiver's clock, so a fix without a time (a receiver that has not said
    /// the date yet) counts for nothing rather than mixing in another clock.
    init?(_ location: Location, rules: MonitoringRules) {
        guard location.mode.hasPosition, let timestamp = location.timestamp,
            let accuracy = location.horizontalAccuracy, accuracy.isFinite,
            accuracy >= 0, accuracy <= rules.maximumAccuracy
        else { return nil }
        let point = Coordinate(latitude: location.latitude, longitude: location.longitude)
        guard point.isValid else { return nil }
        self.location = location
        self.point = point
        self.accuracy = accuracy
        self.date = timestamp
    }
}
