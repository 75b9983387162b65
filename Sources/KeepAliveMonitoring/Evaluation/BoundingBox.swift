import Glibc

/// A latitude/longitude box around a region or a fix's accuracy circle, for the quick test
/// that skips the regions a fix is nowhere near.
struct BoundingBox: Sendable, Hashable {
    var minLatitude: Double
    var maxLatitude: Double
    var minLongitude: Double
    var maxLongitude: Double

    /// Every point: a region near a pole or across the antimeridian, always tested exactly.
    static let world = BoundingBox(minLatitude: -90, maxLatitude: 90, minLongitude: -180, maxLongitude: 180)

    /// The box around the circle of `radius` metres at `center` (a little larger, never smaller).
    init(around center: Coordinate, radius: Double) {
        let latitudeSpan = radius / Coordinate.metresPerDegree * 1.001 + 1e-9
        let poleward = abs(center.latitude) + latitudeSpan
        guard poleward < 89 else {
            self = .world
            return
        }
        let longitudeSpan = latitudeSpan / cos(poleward * .pi / 180)
        guard abs(center.longitude) + longitudeSpan < 180 else {
            self = .world
            return
        }
        self.init(
            minLatitude: center.latitude - latitudeSpan, maxLatitude: center.latitude + latitudeSpan,
            minLongitude: center.longitude - longitudeSpan, maxLongitude: center.longitude + longitudeSpan
        )
    }

    /// The box around `vertices` (a polygon's edges are straight in latitude and longitude).
    init(around vertices: [Coordinate]) {
        let latitudes = vertices.map(\.latitude)
        let longitudes = vertices.map(\.longitude)
        let box = BoundingBox(
            minLatitude: latitudes.min()!, maxLatitude: latitudes.max()!,
            minLongitude: longitudes.min()!, maxLongitude: longitudes.max()!
        )
        self = box.maxLongitude - box.minLongitude > 180 || abs(box.minLatitude) > 89 || abs(box.maxLatitude) > 89 ? .world : box
    }

    private init(minLatitude: Double, maxLatitude: Double, minLongitude: Double, maxLongitude: Double) {
        self.minLatitude = minLatitude
        self.maxLatitude = maxLatitude
        self.minLongitude = minLongitude
        self.maxLongitude = maxLongitude
    }

    /// Whether the boxes share no point.
    @inline(__always)
    func isDisjoint(from other: BoundingBox) -> Bool {
        maxLatitude < other.minLatitude || minLatitude > other.maxLatitude
            || maxLongitude < other.minLongitude || minLongitude > other.maxLongitude
    }

    /// Whether this is ``world``.
    var isWorld: Bool { self == .world }
}
