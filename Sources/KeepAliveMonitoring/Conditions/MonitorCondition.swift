import FoundationEssentials

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
    /// ``MonitoringRules/significantDistance`` since the last one, at most one per
    /// ``MonitoringRules/significantInterval``; the first fix gives the first.
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

    /// Whether it is a region (a circle or a polygon): entered and left.
    public var isRegion: Bool {
        switch self {
        case .circle, .polygon: true
        case .significantChange, .visit: false
        }
    }

    /// A circle's ``CircularRegion/name``, if it has one (an OwnTracks waypoint's `desc`).
    public var name: String? {
        guard case .circle(let region) = self else { return nil }
        return region.name
    }

    /// The same condition but for a circle's ``CircularRegion/name`` and
    /// ``CircularRegion/created``: what its events are decided by.
    func isSameWatch(as other: MonitorCondition) -> Bool {
        guard case .circle(var mine) = self, case .circle(let theirs) = other else { return self == other }
        mine.name = theirs.name
        mine.created = theirs.created
        return mine == theirs
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

extension MonitorCondition {
    private enum CodingKeys: String, CodingKey {
        case type, latitude, longitude, radius, vertices, name, created
    }

    /// `{"type": "circle", "latitude": 52.37, "longitude": 4.89, "radius": 150}` (with an optional
    /// `"name"`, and `"created"` in seconds since 1970), `{"type":
    /// "polygon", "vertices": [{"latitude": ..., "longitude": ...}, ...]}`, `{"type":
    /// "significant-change"}` or `{"type": "visit"}`: the monitor's file, and a regions file.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let type = try container.decode(String.self, forKey: .type)
        switch type {
        case "circle":
            let center = Coordinate(
                latitude: try container.decode(Double.self, forKey: .latitude),
                longitude: try container.decode(Double.self, forKey: .longitude)
            )
            self = .circle(
                CircularRegion(
                    center: center,
                    radius: try container.decode(Double.self, forKey: .radius),
                    name: try container.decodeIfPresent(String.self, forKey: .name),
                    created: try container.decodeIfPresent(Double.self, forKey: .created).map(Date.init(timeIntervalSince1970:))
                )
            )
        case "polygon": self = .polygon(try container.decode([Coordinate].self, forKey: .vertices))
        case "significant-change": self = .significantChange
        case "visit": self = .visit
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .type, in: container,
                debugDescription: "unknown condition type \"\(type)\": circle, polygon, significant-change or visit"
            )
        }
    }

    /// See ``init(from:)``.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .circle(let region):
            try container.encode("circle", forKey: .type)
            try container.encode(region.center.latitude, forKey: .latitude)
            try container.encode(region.center.longitude, forKey: .longitude)
            try container.encode(region.radius, forKey: .radius)
            try container.encodeIfPresent(region.name, forKey: .name)
            try container.encodeIfPresent(region.created?.timeIntervalSince1970, forKey: .created)
        case .polygon(let region):
            try container.encode("polygon", forKey: .type)
            try container.encode(region.vertices, forKey: .vertices)
        case .significantChange: try container.encode("significant-change", forKey: .type)
        case .visit: try container.encode("visit", forKey: .type)
        }
    }
}
