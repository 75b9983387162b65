public import FoundationEssentials
public import KeepAliveMonitoring
import KeepAliveCore

/// An OwnTracks waypoint (`_type: waypoint`): a circular region the device watches, published
/// as `transition` messages when entered and left.
///
/// Its condition's identifier is its region id (`rid`); a waypoint without one gets its `tst`
/// in hexadecimal, since OwnTracks identifies a waypoint by its `tst`. Its `desc` is the region's
/// name and its `tst` the region's creation time, so each transition carries them.
public struct OwnTracksWaypoint: Sendable, Hashable {
    /// `desc`: what the user calls it.
    public var description: String
    /// `lat`, `lon`: the centre.
    public var center: Coordinate
    /// `rad`: metres.
    public var radius: Double
    /// `tst`: when it was defined, which identifies it in OwnTracks.
    public var created: Date
    /// `rid`: the region id, if it has one.
    public var regionID: String?

    /// A waypoint from its parts.
    public init(description: String, center: Coordinate, radius: Double, created: Date, regionID: String? = nil) {
        self.description = description
        self.center = center
        self.radius = radius
        self.created = created
        self.regionID = regionID
    }

    /// The identifier of its condition: ``regionID``, or `tst` in hexadecimal.
    public var identifier: String {
        regionID ?? String(Int64(created.timeIntervalSince1970.rounded(.down)), radix: 16)
    }

    /// The circle it watches, named ``description``, created at ``created``.
    public var condition: MonitorCondition {
        .circle(CircularRegion(center: center, radius: radius, name: description, created: created))
    }

    /// The conditions of an OwnTracks waypoints document, by identifier: `{"_type": "waypoints",
    /// "waypoints": [...]}` (what the apps export and `setWaypoints` carries), or a bare array of
    /// `_type: waypoint` objects. Numbers may be written as strings, as some apps do.
    ///
    /// - Throws: ``OwnTracksError/badWaypoints(_:)`` naming the first waypoint that is not one (not
    ///   JSON, a field missing, a centre off the globe, a radius not a positive number of metres up
    ///   to 1,000 km, two with one identifier), with nothing taken.
    public static func conditions(fromJSON data: Data) throws(OwnTracksError) -> [String: MonitorCondition] {
        try conditions(of: parse(data))
    }

    /// The conditions of `waypoints`, by identifier, checked as ``conditions(fromJSON:)`` says.
    public static func conditions(of waypoints: [OwnTracksWaypoint]) throws(OwnTracksError) -> [String: MonitorCondition] {
        var conditions: [String: MonitorCondition] = [:]
        // The monitor's own checks, said per waypoint (in memory: it has no file to fail on).
        let check: LocationMonitor
        do { check = try LocationMonitor(named: "check") } catch { throw .badWaypoints(error.message) }
        for (index, waypoint) in waypoints.enumerated() {
            let name = "waypoint \(index + 1) (\"\(waypoint.description)\")"
            do {
                try check.add(waypoint.condition, identifier: waypoint.identifier)
            } catch {
                throw .badWaypoints("\(name): \(error.message)")
            }
            guard conditions.updateValue(waypoint.condition, forKey: waypoint.identifier) == nil else {
                throw .badWaypoints("\(name) has the identifier \(waypoint.identifier) of an earlier one: give each its own rid or tst")
            }
        }
        return conditions
    }

    /// The waypoints of a document (see ``conditions(fromJSON:)``), in its order.
    public static func parse(_ data: Data) throws(OwnTracksError) -> [OwnTracksWaypoint] {
        do {
            return try JSONDecoder().decode(List.self, from: data).waypoints
        } catch let error as OwnTracksError {
            throw error
        } catch {
            throw .badWaypoints("not an OwnTracks waypoints document (\(Self.reason(error)))")
        }
    }

    /// `waypoints` as the document OwnTracks exports (`{"_type": "waypoints", "waypoints": [...]}`),
    /// what the `waypoints` command publishes and what a file of ``parse(_:)`` reads back.
    public static func document(_ waypoints: [OwnTracksWaypoint]) -> String {
        OwnTracksPayload.encode(OwnTracksMessage.Waypoints(waypoints: waypoints.map(OwnTracksMessage.Waypoint.init)))
    }

    /// A waypoints document or a bare array of waypoints, as JSON has it.
    struct List: Decodable {
        var waypoints: [OwnTracksWaypoint]

        private enum CodingKeys: String, CodingKey {
            case type = "_type", waypoints
        }

        init(from decoder: any Decoder) throws {
            if let container = try? decoder.container(keyedBy: CodingKeys.self) {
                let type = try container.decode(String.self, forKey: .type)
                guard type == "waypoints" else {
                    throw OwnTracksError.badWaypoints("the document's _type is \"\(type)\", not \"waypoints\"")
                }
                waypoints = try container.decode([Decoded].self, forKey: .waypoints).map(\.waypoint)
            } else {
                waypoints = try decoder.singleValueContainer().decode([Decoded].self).map(\.waypoint)
            }
        }
    }

    /// One waypoint as JSON has it.
    private struct Decoded: Decodable {
        var waypoint: OwnTracksWaypoint

        enum CodingKeys: String, CodingKey {
            case type = "_type", desc, lat, lon, rad, tst, rid
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            if let type = try container.decodeIfPresent(String.self, forKey: .type), type != "waypoint" {
                throw DecodingError.dataCorruptedError(forKey: .type, in: container, debugDescription: "_type \"\(type)\" is not \"waypoint\"")
            }
            func number(_ key: CodingKeys) throws -> Double {
                if let value = try? container.decode(Double.self, forKey: key) { return value }
                let text = try container.decode(String.self, forKey: key)
                guard let value = Double(text.trimmed) else {
                    throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "\"\(text)\" is not a number")
                }
                return value
            }
            let created = try number(.tst)
            guard created.isFinite, created >= 0, created < 1e11 else {
                throw DecodingError.dataCorruptedError(forKey: .tst, in: container, debugDescription: "tst \(created) is not a time in seconds since 1970")
            }
            let regionID = try container.decodeIfPresent(String.self, forKey: .rid)
            if let regionID, regionID.isEmpty || regionID.count > 64 || !regionID.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) {
                throw DecodingError.dataCorruptedError(forKey: .rid, in: container, debugDescription: "rid must be 1 to 64 letters, digits, - or _")
            }
            let description = try container.decode(String.self, forKey: .desc)
            guard !description.isEmpty else {
                throw DecodingError.dataCorruptedError(forKey: .desc, in: container, debugDescription: "desc is empty")
            }
            waypoint = OwnTracksWaypoint(
                description: description,
                center: Coordinate(latitude: try number(.lat), longitude: try number(.lon)),
                radius: try number(.rad),
                created: Date(timeIntervalSince1970: created.rounded(.down)),
                regionID: regionID
            )
        }
    }

    /// A decoding error in a sentence: what is wrong and where.
    static func reason(_ error: any Error) -> String {
        func path(_ keys: [any CodingKey]) -> String {
            keys.isEmpty ? "the document" : keys.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        }
        switch error as? DecodingError {
        case .keyNotFound(let key, let context)?: return "\(path(context.codingPath + [key])) is missing"
        case .typeMismatch(_, let context)?, .valueNotFound(_, let context)?:
            return "\(path(context.codingPath)) has the wrong type: \(context.debugDescription)"
        case .dataCorrupted(let context)?:
            return context.codingPath.isEmpty ? "not JSON" : "\(path(context.codingPath)): \(context.debugDescription)"
        default: return "\(error)"
        }
    }
}
