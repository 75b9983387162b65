import Glibc

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
        let lat1 = latitude * .pi / 180
        let lat2 = other.latitude * .pi / 180
        let dLat = lat2 - lat1
        let dLon = (other.longitude - longitude) * .pi / 180
        let a = sin(dLat / 2) * sin(dLat / 2) + cos(lat1) * cos(lat2) * sin(dLon / 2) * sin(dLon / 2)
        return 2 * Coordinate.earthRadius * asin(min(1, a.squareRoot()))
    }

    /// `52.51, 5.18`.
    public var description: String { "\(latitude), \(longitude)" }

    /// The mean Earth radius in metres (IUGG).
    static let earthRadius = 6_371_008.8
    /// Metres per degree of latitude on that sphere.
    static let metresPerDegree = earthRadius * .pi / 180
}
