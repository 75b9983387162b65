/// What a ``LocationMonitor`` watches for: a region, significant changes, or visits.
///
/// The regions are `CLMonitor`'s geographic conditions; significant changes and visits are
/// CoreLocation's services of those names, here conditions of the same monitor so that one
/// stream, one file and (under the host) one registration carry them all.
public enum MonitorCondition: Sendable, Hashable, Codable {
    /// Inside a circle: satisfied on entry, unsatisfied on exit.
    case circle(CircularRegion)
    /// Inside a polygon: satisfied on entry, unsatisfied on exit.
    case polygon(PolygonRegion)
    /// An event, always satisfied, each time the device has surely moved at least
    /// ``SignificantChangeRules/distance`` since the last one, at most one per
    /// ``SignificantChangeRules/interval``; the first fix gives the first.
    case significantChange
    /// At a place: satisfied on arrival (after dwelling), unsatisfied on departure; the event
    /// carries the ``Visit``.
    case visit

    /// A circle of `radius` metres around `center`.
    public static func circle(center: Coordinate, radius: Double) -> MonitorCondition {
        .circle(CircularRegion(center: center, radius: radius))
    }

    /// The area inside `vertices`.
    public static func polygon(_ vertices: [Coordinate]) -> MonitorCondition {
        .polygon(PolygonRegion(vertices: vertices))
    }

    /// Throws ``MonitoringError/Code/invalidCondition`` for a region that cannot be monitored.
    public func validate() throws(MonitoringError) {
        switch self {
        case .circle(let region): try region.validate()
        case .polygon(let region): try region.validate()
        case .significantChange, .visit: break
        }
    }

    /// The region's signed distance from `point` to its edge in metres (negative inside), or
    /// `nil` for a condition that is not a region.
    func signedDistance(from point: Coordinate) -> Double? {
        switch self {
        case .circle(let region): region.signedDistance(from: point)
        case .polygon(let region): region.signedDistance(from: point)
        case .significantChange, .visit: nil
        }
    }
}
