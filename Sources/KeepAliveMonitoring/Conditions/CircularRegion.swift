public import FoundationEssentials

/// A circle on the ground: `CLMonitor.CircularGeographicCondition`, `CLCircularRegion`.
public struct CircularRegion: Sendable, Hashable, Codable {
    /// The centre.
    public var center: Coordinate
    /// The radius in metres.
    public var radius: Double
    /// What its owner calls it (an OwnTracks waypoint's `desc`), told with its events.
    public var name: String?
    /// When its owner defined it (an OwnTracks waypoint's `tst`, which identifies it there).
    public var created: Date?

    /// The circle of `radius` metres around `center`, called `name`, defined at `created`.
    public init(center: Coordinate, radius: Double, name: String? = nil, created: Date? = nil) {
        self.center = center
        self.radius = radius
        self.name = name
        self.created = created
    }

    /// The longest ``name`` accepted, in characters.
    public static let maximumNameLength = 200

    /// The largest radius accepted, 1,000 km: a larger circle is a mistake in units, and the
    /// quick bounding-box test assumes a region does not wrap around a pole.
    public static let maximumRadius = 1_000_000.0

    /// Throws ``MonitoringError/Code/invalidCondition`` for a centre off the globe or a radius that
    /// is not a positive number of metres up to ``maximumRadius``.
    func validate() throws(MonitoringError) {
        guard center.isValid else {
            throw .invalidCondition("a region's centre must be a latitude from -90 to 90 and a longitude from -180 to 180, not \(center)")
        }
        guard radius.isFinite, radius > 0 else {
            throw .invalidCondition("a region's radius must be a positive number of metres, not \(radius)")
        }
        if let name, name.count > Self.maximumNameLength || name.contains(where: { $0.isNewline }) {
            throw .invalidCondition("a region's name must be one line of at most \(Self.maximumNameLength) characters")
        }
        guard radius <= Self.maximumRadius else {
            throw .invalidCondition(
                "a region's radius of \(radius) m is more than the largest accepted, \(Int(Self.maximumRadius / 1000)) km: "
                    + "is it in metres?"
            )
        }
    }

    /// The signed distance from `point` to the circle's edge in metres: negative inside.
    func signedDistance(from point: Coordinate) -> Double { center.distance(to: point) - radius }
}
