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
    /// The receiver's time, or the monitor's clock when the receiver said none.
    var date: Date

    /// `location` if it counts under `rules`: a 2D or 3D position whose accuracy is known and
    /// at most ``MonitoringRules/maximumAccuracy``.
    init?(_ location: Location, rules: MonitoringRules, now: Date) {
        guard location.mode.hasPosition, let accuracy = location.horizontalAccuracy, accuracy.isFinite,
            accuracy >= 0, accuracy <= rules.maximumAccuracy
        else { return nil }
        let point = Coordinate(latitude: location.latitude, longitude: location.longitude)
        guard point.isValid else { return nil }
        self.location = location
        self.point = point
        self.accuracy = accuracy
        self.date = location.timestamp ?? now
    }
}
