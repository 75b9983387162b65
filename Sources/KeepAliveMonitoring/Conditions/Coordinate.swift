import KeepAliveCore

/// A point on the WGS84 ellipsoid: a region's centre or a polygon's vertex.
public struct Coordinate: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Degrees, positive north, -90 to 90.
    public var latitude: Double
    /// Degrees, positive east, -180 to 180.
    public var longitude: Double

    /// The point at `latitude`, `longitude` (degrees).
    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// Whether both values are finite and in range.
    public var isValid: Bool {
        latitude.isFinite && longitude.isFinite && abs(latitude) <= 90 && abs(longitude) <= 180
    }

    /// Great-circle distance in metres (haversine on the mean Earth radius, as ``Location/distance(from:)``).
    public func distance(to other: Coordinate) -> Double {
        Location.greatCircleDistance(latitude, longitude, other.latitude, other.longitude)
    }

    /// `52.51, 5.18`.
    public var description: String { "\(latitude), \(longitude)" }

    /// Metres per degree of latitude on the sphere distances are measured on.
    static let metresPerDegree = Location.earthRadius * .pi / 180
}
