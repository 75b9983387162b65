import Glibc
import KeepAliveCore

/// Where a simulated receiver is: still at a point, or along a path of points at a speed, or
/// along a log's fixes (one a second), looping.
public struct SimulatedTrack: Sendable {
    /// A position and the motion there.
    public struct Position: Sendable, Hashable {
        /// Degrees north.
        public var latitude: Double
        /// Degrees east.
        public var longitude: Double
        /// Metres per second.
        public var speed: Double
        /// Degrees from true north.
        public var course: Double
    }

    private let points: [(latitude: Double, longitude: Double)]
    private let secondsPerPoint: Double

    /// Still at one point.
    public static func still(latitude: Double, longitude: Double) -> SimulatedTrack {
        SimulatedTrack(points: [(latitude, longitude)], secondsPerPoint: 1)
    }

    /// Along `points`, `secondsPerPoint` from one to the next (a log's fixes: 1), looping.
    public init(points: [(latitude: Double, longitude: Double)], secondsPerPoint: Double = 1) {
        self.points = points.isEmpty ? [(0, 0)] : points
        self.secondsPerPoint = max(secondsPerPoint, 0.001)
    }

    /// The fixes of an NMEA log, one a second.
    public static func log(_ bytes: [UInt8]) -> SimulatedTrack {
        var decoder = NMEADecoder(bytes: bytes)
        var points: [(latitude: Double, longitude: Double)] = []
        while let report = decoder.next() {
            if let fix = report.location { points.append((fix.latitude, fix.longitude)) }
        }
        return SimulatedTrack(points: points)
    }

    /// Where it is `elapsed` seconds after it began.
    public func position(at elapsed: Double) -> Position {
        guard points.count > 1 else { return Position(latitude: points[0].latitude, longitude: points[0].longitude, speed: 0, course: 0) }
        let place = (max(0, elapsed) / secondsPerPoint).truncatingRemainder(dividingBy: Double(points.count - 1))
        let index = Int(place)
        let (a, b) = (points[index], points[index + 1])
        let fraction = place - Double(index)
        let here = Location(latitude: a.latitude, longitude: a.longitude)
        let there = Location(latitude: b.latitude, longitude: b.longitude)
        return Position(
            latitude: a.latitude + (b.latitude - a.latitude) * fraction,
            longitude: a.longitude + (b.longitude - a.longitude) * fraction,
            speed: here.distance(from: there) / secondsPerPoint,
            course: (atan2(b.longitude - a.longitude, b.latitude - a.latitude) * 180 / .pi + 360).truncatingRemainder(dividingBy: 360)
        )
    }
}
