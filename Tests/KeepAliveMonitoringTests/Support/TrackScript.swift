import FoundationEssentials
import Glibc
import KeepAliveCore
import KeepAliveMonitoring
import LocationKeepAliveMocks

/// Scripted fixes for the monitor's tests: positions in metres from an origin, with noise
/// that wanders as a real receiver's does (a first-order Gauss-Markov process: each second
/// keeps most of the last second's error), and the accuracy the receiver reports.
struct TrackScript {
    static let origin = Coordinate(latitude: 52.85, longitude: 5.31)
    static let start = Date(timeIntervalSince1970: 1_750_000_000)

    var random: SeededGenerator
    /// The reported 95% accuracy, metres.
    var accuracy = 11.4
    /// The error's standard deviation per axis: the accuracy a receiver that means its 95% has.
    var sigma: Double { accuracy / 2.45 }
    /// How long the error takes to forget itself.
    var correlationTime = 30.0
    private var errorNorth = 0.0
    private var errorEast = 0.0
    private(set) var fixes: [Location] = []
    private(set) var seconds = 0.0

    init(seed: UInt64) {
        random = SeededGenerator(state: seed)
    }

    /// The point `north` and `east` metres from ``origin`` (flat-Earth, fine for a few km).
    static func point(north: Double, east: Double) -> Coordinate {
        let metresPerDegree = 6_371_008.8 * .pi / 180
        return Coordinate(
            latitude: origin.latitude + north / metresPerDegree,
            longitude: origin.longitude + east / (metresPerDegree * cos(origin.latitude * .pi / 180))
        )
    }

    /// One fix a second for `duration` seconds, the true position from `position(t)` in metres
    /// (north, east), `t` from 0 at the start of this leg.
    mutating func move(for duration: Int, speed: Double? = nil, position: (Double) -> (north: Double, east: Double)) {
        let keep = exp(-1 / correlationTime)
        for t in 0..<duration {
            errorNorth = keep * errorNorth + (1 - keep * keep).squareRoot() * sigma * gaussian()
            errorEast = keep * errorEast + (1 - keep * keep).squareRoot() * sigma * gaussian()
            let truth = position(Double(t))
            let point = Self.point(north: truth.north + errorNorth, east: truth.east + errorEast)
            fixes.append(
                Location(
                    latitude: point.latitude, longitude: point.longitude, horizontalAccuracy: accuracy, speed: speed,
                    timestamp: Self.start.addingTimeInterval(seconds), mode: .threeDimensional
                )
            )
            seconds += 1
        }
    }

    /// Starts the error at its steady spread (not at zero).
    mutating func settle() {
        errorNorth = sigma * gaussian()
        errorEast = sigma * gaussian()
    }

    private mutating func gaussian() -> Double {
        let u = Double.random(in: Double.ulpOfOne..<1, using: &random)
        let v = Double.random(in: 0..<1, using: &random)
        return (-2 * log(u)).squareRoot() * cos(2 * .pi * v)
    }
}

/// The great-circle distance in metres, written here so the tests do not check the library
/// against itself (haversine on the mean Earth radius).
func greatCircleDistance(_ a: Coordinate, _ b: Coordinate) -> Double {
    let radians = Double.pi / 180
    let dLat = (b.latitude - a.latitude) * radians
    let dLon = (b.longitude - a.longitude) * radians
    let h = pow(sin(dLat / 2), 2) + cos(a.latitude * radians) * cos(b.latitude * radians) * pow(sin(dLon / 2), 2)
    return 2 * 6_371_008.8 * asin(min(1, h.squareRoot()))
}

extension Location {
    var coordinate: Coordinate { Coordinate(latitude: latitude, longitude: longitude) }
}

/// The fixes of a bundled log with a time, as the replay decodes them.
func fixes(of fixture: NMEAFixture) throws -> [Location] {
    var decoder = NMEADecoder(bytes: try fixture.bytes())
    var fixes: [Location] = []
    while let report = decoder.next() {
        if let location = report.location, location.timestamp != nil { fixes.append(location) }
    }
    return fixes
}
