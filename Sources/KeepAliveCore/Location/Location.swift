public import FoundationEssentials
import Glibc

/// One position fix from a receiver, as gpsd or the NMEA replay decoded it.
///
/// Unknown values are `nil`, never 0: gpsd reports NaN for what the receiver did not say.
public struct Location: Sendable, Hashable, Codable {
    /// Latitude in degrees, WGS84, positive north.
    public var latitude: Double
    /// Longitude in degrees, WGS84, positive east.
    public var longitude: Double
    /// Height above the WGS84 ellipsoid, in metres.
    public var altitudeHAE: Double?
    /// Height above mean sea level (the receiver's geoid), in metres.
    public var altitudeMSL: Double?
    /// Estimated horizontal position error in metres.
    ///
    /// From gpsd this is the TPV `eph`; gpsd derives it from HDOP times a user range
    /// error of 19 m (4.75 m with DGPS), about 95% confidence. The NMEA replay computes
    /// it the same way, so both sources agree.
    public var horizontalAccuracy: Double?
    /// Estimated vertical position error in metres (gpsd's `epv`: VDOP times 23 m, 5.75 m with DGPS).
    public var verticalAccuracy: Double?
    /// Speed over ground in metres per second.
    public var speed: Double?
    /// Course over ground in degrees from true north.
    public var course: Double?
    /// The receiver's UTC time of the fix; `nil` until the receiver has said the date.
    public var timestamp: Date?
    /// Two- or three-dimensional fix.
    public var mode: FixMode
    /// How the fix was obtained (plain GPS, DGPS, RTK...), when the receiver says.
    public var quality: FixQuality?
    /// Satellites used in the solution, when known.
    public var satellitesUsed: Int?
    /// The receiver's device path (gpsd) or the log file name (replay).
    public var device: String?

    /// A fix with these values; what gpsd did not report stays `nil`.
    public init(
        latitude: Double,
        longitude: Double,
        altitudeHAE: Double? = nil,
        altitudeMSL: Double? = nil,
        horizontalAccuracy: Double? = nil,
        verticalAccuracy: Double? = nil,
        speed: Double? = nil,
        course: Double? = nil,
        timestamp: Date? = nil,
        mode: FixMode = .threeDimensional,
        quality: FixQuality? = nil,
        satellitesUsed: Int? = nil,
        device: String? = nil
    ) {
        self.latitude = latitude
        self.longitude = longitude
        self.altitudeHAE = altitudeHAE
        self.altitudeMSL = altitudeMSL
        self.horizontalAccuracy = horizontalAccuracy
        self.verticalAccuracy = verticalAccuracy
        self.speed = speed
        self.course = course
        self.timestamp = timestamp
        self.mode = mode
        self.quality = quality
        self.satellitesUsed = satellitesUsed
        self.device = device
    }

    /// Great-circle distance to another location in metres (haversine, mean Earth radius).
    public func distance(from other: Location) -> Double {
        Self.greatCircleDistance(latitude, longitude, other.latitude, other.longitude)
    }

    /// The mean Earth radius in metres (IUGG), which distances are measured on.
    package static let earthRadius = 6_371_008.8

    /// Great-circle distance in metres between two points given in degrees (haversine).
    package static func greatCircleDistance(
        _ latitude1: Double, _ longitude1: Double, _ latitude2: Double, _ longitude2: Double
    ) -> Double {
        let lat1 = latitude1 * .pi / 180
        let lat2 = latitude2 * .pi / 180
        let dLat = lat2 - lat1
        let dLon = (longitude2 - longitude1) * .pi / 180
        let a = sin(dLat / 2) * sin(dLat / 2) + cos(lat1) * cos(lat2) * sin(dLon / 2) * sin(dLon / 2)
        return 2 * earthRadius * asin(min(1, a.squareRoot()))
    }
}
