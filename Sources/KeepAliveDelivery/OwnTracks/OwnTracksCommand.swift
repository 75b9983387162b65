public import FoundationEssentials

/// A remote command (`_type: cmd`), as a server or a friend sends it to the device: over MQTT
/// on `owntracks/USER/DEVICE/cmd`. Read by ``parse(_:encryption:)`` with a `JSONDecoder`: a
/// command is input from the network, refused whole, with the reason, unless it is one.
public enum OwnTracksCommand: Sendable, Hashable {
    /// `reportLocation`: publish a fresh fix at once.
    case reportLocation
    /// `setWaypoints`: watch these waypoints instead of the current ones.
    case setWaypoints([OwnTracksWaypoint])
    /// `clearWaypoints`: watch no waypoints.
    case clearWaypoints
    /// `waypoints`: publish the current waypoints on `TOPIC/waypoints`.
    case waypoints
    /// `dump`: publish the configuration, without secrets, on `TOPIC/dump`.
    case dump

    /// The longest command read: a `setWaypoints` of about 2,000 waypoints. A longer message is
    /// refused unread.
    public static let largestPayload = 256 * 1024

    /// The actions the device carries out (OwnTracks' names).
    public static let actions = ["reportLocation", "setWaypoints", "clearWaypoints", "waypoints", "dump"]

    /// The action's name, as OwnTracks spells it.
    public var action: String {
        switch self {
        case .reportLocation: "reportLocation"
        case .setWaypoints: "setWaypoints"
        case .clearWaypoints: "clearWaypoints"
        case .waypoints: "waypoints"
        case .dump: "dump"
        }
    }

    /// The command in `payload`.
    ///
    /// With `encryption`, only an `_type: encrypted` payload sealed with that key is taken (a
    /// plain command could come from anyone who can publish on the topic); without, only a plain
    /// one.
    ///
    /// - Throws: ``OwnTracksError/badCommand(_:)`` saying why it is not one the device takes:
    ///   too long, not JSON, encrypted with another key (or damaged), not `_type: cmd`, an
    ///   unknown action, waypoints that are not (a centre off the globe, a bad radius...).
    public static func parse(_ payload: Data, encryption: OwnTracksEncryption?) throws(OwnTracksError) -> OwnTracksCommand {
        guard payload.count <= largestPayload else {
            throw .badCommand("\(payload.count) bytes, more than the \(largestPayload) a command may have")
        }
        let decoder = JSONDecoder()
        let envelope: Envelope
        do {
            envelope = try decoder.decode(Envelope.self, from: payload)
        } catch {
            throw .badCommand("not an OwnTracks message (\(OwnTracksWaypoint.reason(error)))")
        }
        var message = payload
        switch (envelope.type, encryption) {
        case ("encrypted", let encryption?):
            do {
                message = try encryption.open(payload)
            } catch {
                throw .badCommand("\(error)")
            }
        case ("encrypted", nil):
            throw .badCommand("it is encrypted, and the destination has no key-file to open it with")
        case (_, .some):
            throw .badCommand("it is not encrypted, and the destination has a key-file: only commands sealed with its key are taken")
        case (_, nil): break
        }
        let command: Decoded
        do {
            let inner = try decoder.decode(Envelope.self, from: message)
            guard inner.type == "cmd" else { throw OwnTracksError.badCommand("its _type is \"\(inner.type)\", not \"cmd\"") }
            command = try decoder.decode(Decoded.self, from: message)
        } catch let error as OwnTracksError {
            throw error.isCommandError ? error : .badCommand("\(error)")
        } catch {
            throw .badCommand("not an OwnTracks command (\(OwnTracksWaypoint.reason(error)))")
        }
        switch command.action {
        case "reportLocation": return .reportLocation
        case "clearWaypoints": return .clearWaypoints
        case "waypoints": return .waypoints
        case "dump": return .dump
        case "setWaypoints":
            guard let list = command.waypoints else {
                throw .badCommand("setWaypoints without waypoints ({\"_type\": \"waypoints\", \"waypoints\": [...]})")
            }
            do {
                _ = try OwnTracksWaypoint.conditions(of: list.waypoints)
            } catch {
                throw .badCommand("setWaypoints: \(error)")
            }
            return .setWaypoints(list.waypoints)
        case "setConfiguration":
            throw .badCommand("setConfiguration is not taken yet (monitoring modes come with a later version)")
        default:
            let shown = command.action.count > 40 ? command.action.prefix(40) + "..." : command.action
            throw .badCommand("unknown action \"\(shown)\" (known: \(actions.joined(separator: ", ")))")
        }
    }

    /// What any OwnTracks message has: its type.
    private struct Envelope: Decodable {
        var type: String

        enum CodingKeys: String, CodingKey {
            case type = "_type"
        }
    }

    /// A command as JSON has it.
    private struct Decoded: Decodable {
        var type: String
        var action: String
        var waypoints: OwnTracksWaypoint.List?

        enum CodingKeys: String, CodingKey {
            case type = "_type", action, waypoints
        }
    }
}
