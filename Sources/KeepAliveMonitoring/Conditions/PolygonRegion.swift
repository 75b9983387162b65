import Glibc

/// An area bounded by straight lines between vertices (a geofence drawn on a map).
///
/// Distances to its edges are measured on a plane tangent to the Earth at the fix (an
/// equirectangular projection), which is within 0.1% for the 50 km a polygon may span.
public struct PolygonRegion: Sendable, Hashable, Codable {
    /// The vertices in order, clockwise or not; the last joins the first.
    public var vertices: [Coordinate]

    /// The area inside `vertices`.
    public init(vertices: [Coordinate]) {
        self.vertices = vertices
    }

    /// How far the vertices may lie from the first, 50 km: beyond, the flat projection errs.
    public static let maximumSpan = 50_000.0
    /// The most vertices accepted, 1,000.
    public static let maximumVertices = 1_000

    /// Throws ``MonitoringError/Code/invalidCondition`` for fewer than 3 distinct vertices, more than
    /// ``maximumVertices``, a vertex off the globe, or a span over ``maximumSpan``.
    func validate() throws(MonitoringError) {
        guard Set(vertices).count >= 3 else {
            throw .invalidCondition("a polygon needs at least 3 distinct vertices, not \(Set(vertices).count)")
        }
        guard vertices.count <= Self.maximumVertices else {
            throw .invalidCondition("a polygon may have at most \(Self.maximumVertices) vertices, not \(vertices.count)")
        }
        if let bad = vertices.first(where: { !$0.isValid }) {
            throw .invalidCondition("a polygon's vertex must be a latitude from -90 to 90 and a longitude from -180 to 180, not \(bad)")
        }
        let first = vertices[0]
        if let far = vertices.first(where: { $0.distance(to: first) > Self.maximumSpan }) {
            throw .invalidCondition(
                "a polygon may span at most \(Int(Self.maximumSpan / 1000)) km, but \(far) is "
                    + "\(Int(far.distance(to: first) / 1000)) km from its first vertex: split it"
            )
        }
    }

    /// The signed distance from `point` to the nearest edge in metres: negative inside.
    func signedDistance(from point: Coordinate) -> Double {
        let scale = cos(point.latitude * .pi / 180) * Coordinate.metresPerDegree
        var inside = false
        var nearest = Double.infinity
        var previous = vertices[vertices.count - 1]
        for vertex in vertices {
            // The edge previous→vertex in metres east (x) and north (y) of the point.
            let ax = Self.longitudeDifference(previous.longitude, point.longitude) * scale
            let ay = (previous.latitude - point.latitude) * Coordinate.metresPerDegree
            let bx = Self.longitudeDifference(vertex.longitude, point.longitude) * scale
            let by = (vertex.latitude - point.latitude) * Coordinate.metresPerDegree
            if (ay > 0) != (by > 0), 0 < ax + (0 - ay) * (bx - ax) / (by - ay) { inside.toggle() }
            nearest = min(nearest, Self.distanceToSegment(ax, ay, bx, by))
            previous = vertex
        }
        return inside ? -nearest : nearest
    }

    /// `a - b` in degrees, across the antimeridian the short way.
    private static func longitudeDifference(_ a: Double, _ b: Double) -> Double {
        var difference = a - b
        if difference > 180 { difference -= 360 } else if difference < -180 { difference += 360 }
        return difference
    }

    /// The distance from the origin to the segment (ax, ay)–(bx, by).
    private static func distanceToSegment(_ ax: Double, _ ay: Double, _ bx: Double, _ by: Double) -> Double {
        let dx = bx - ax
        let dy = by - ay
        let lengthSquared = dx * dx + dy * dy
        let t = lengthSquared == 0 ? 0 : max(0, min(1, -(ax * dx + ay * dy) / lengthSquared))
        let x = ax + t * dx
        let y = ay + t * dy
        return (x * x + y * y).squareRoot()
    }
}
