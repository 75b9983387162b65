public import FoundationEssentials
import KeepAliveCore

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
    /// `setConfiguration`: the monitoring mode and move mode's settings, the only part of the
    /// configuration that may be set remotely.
    case setConfiguration(OwnTracksConfigurationChange)

    /// The longest command read: a `setWaypoints` of about 2,000 waypoints. A longer message is
    /// refused unread.
    public static let largestPayload = 256 * 1024

    /// The actions the device carries out (OwnTracks' names).
    public static let actions = ["reportLocation", "setWaypoints", "clearWaypoints", "waypoints", "dump", "setConfiguration"]

    /// The action's name, as OwnTracks spells it.
    public var action: String {
        switch self {
        case .reportLocation: "reportLocation"
        case .setWaypoints: "setWaypoints"
        case .clearWaypoints: "clearWaypoints"
        case .waypoints: "waypoints"
        case .dump: "dump"
        case .setConfiguration: "setConfiguration"
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
        // Never nil: every message counts as a command here.
        try parse(payload, encryption: encryption, passingOver: false)!
    }

    /// The commands in a server's answer to a POST (OwnTracks' HTTP mode): a JSON array of
    /// messages, or one. Its `cmd` messages are for the device; the others (friends' locations,
    /// cards) are not commands and are passed over. Each command is read as
    /// ``parse(_:encryption:)`` reads one.
    ///
    /// With a key, the OwnTracks Recorder seals its whole answer, the array, into one
    /// `{"_type": "encrypted"}` envelope (its `http.c`, `dopublish`): that envelope is opened
    /// and the commands in it count as sealed with the key. A command sealed on its own, in a
    /// plain array, is taken too; a plain command outside any envelope is not.
    public static func commands(inAnswer body: Data, encryption: OwnTracksEncryption?) -> [Result<OwnTracksCommand, OwnTracksError>] {
        guard body.count <= largestPayload else {
            return [.failure(.badCommand("an answer of \(body.count) bytes, more than the \(largestPayload) read"))]
        }
        let answer: JSONValue
        do {
            answer = try JSONDecoder().decode(JSONValue.self, from: body)
        } catch {
            return [.failure(.badCommand("the server's answer is not JSON (\(OwnTracksWaypoint.reason(error)))"))]
        }
        return commands(in: answer, encryption: encryption, sealed: false)
    }

    /// The commands in one message or array of them; `sealed` once opened with the key.
    private static func commands(in answer: JSONValue, encryption: OwnTracksEncryption?, sealed: Bool) -> [Result<OwnTracksCommand, OwnTracksError>] {
        if case .array(let messages) = answer {
            return messages.flatMap { commands(in: $0, encryption: encryption, sealed: sealed) }
        }
        guard case .object(let fields) = answer, case .string(let type)? = fields["_type"], type == "encrypted" || type == "cmd" else {
            return []  // a friend's location, a card: not for the device
        }
        let data = (try? JSONEncoder().encode(answer)) ?? Data()
        guard type == "encrypted" else {
            do throws(OwnTracksError) {
                // Inside an envelope opened with the key, a plain command is a sealed one.
                return try parse(data, encryption: sealed ? nil : encryption, passingOver: true).map { [.success($0)] } ?? []
            } catch {
                return [.failure(error)]
            }
        }
        guard let encryption else {
            return [.failure(.badCommand("the answer is encrypted, and the destination has no key-file to open it with"))]
        }
        do {
            let opened = try encryption.open(data)
            return commands(in: try JSONDecoder().decode(JSONValue.self, from: opened), encryption: encryption, sealed: true)
        } catch let error as OwnTracksError {
            return [.failure(.badCommand("\(error)"))]
        } catch {
            return [.failure(.badCommand("the answer opened to something that is not JSON (\(OwnTracksWaypoint.reason(error)))"))]
        }
    }

    /// The command in `payload`; `nil` when `passingOver` and it opens to another type.
    private static func parse(_ payload: Data, encryption: OwnTracksEncryption?, passingOver: Bool) throws(OwnTracksError) -> OwnTracksCommand? {
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
            if passingOver, inner.type != "cmd" { return nil }
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
            guard let change = command.configuration, !change.isEmpty else {
                throw .badCommand("setConfiguration without a configuration that sets monitoring, locatorDisplacement or locatorInterval")
            }
            return .setConfiguration(change)
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
        var configuration: OwnTracksConfigurationChange?

        enum CodingKeys: String, CodingKey {
            case type = "_type", action, waypoints, configuration
        }
    }
}

/// What a `setConfiguration` command may change: the monitoring mode (`monitoring`: -1 quiet,
/// 0 manual, 1 significant, 2 move) and move mode's `locatorDisplacement` (metres) and
/// `locatorInterval` (seconds). A configuration holding anything else (a broker, a password,
/// a key) is refused whole: those are set on the device, never remotely.
public struct OwnTracksConfigurationChange: Sendable, Hashable, Decodable {
    /// The monitoring mode, if given.
    public var monitoring: Int?
    /// Move mode's displacement in metres, if given.
    public var locatorDisplacement: Double?
    /// Move mode's interval in seconds, if given.
    public var locatorInterval: Double?

    /// The keys a remote configuration may hold (besides `_type`).
    public static let settable = ["monitoring", "locatorDisplacement", "locatorInterval"]

    /// Whether it changes nothing.
    var isEmpty: Bool { monitoring == nil && locatorDisplacement == nil && locatorInterval == nil }

    /// A change from its parts.
    public init(monitoring: Int? = nil, locatorDisplacement: Double? = nil, locatorInterval: Double? = nil) {
        self.monitoring = monitoring
        self.locatorDisplacement = locatorDisplacement
        self.locatorInterval = locatorInterval
    }

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        let refused = container.allKeys.map(\.stringValue).filter { $0 != "_type" && !Self.settable.contains($0) }.sorted()
        guard refused.isEmpty else {
            throw OwnTracksError.badCommand(
                "setConfiguration may set only \(Self.settable.joined(separator: ", ")) here, and this one also sets "
                    + "\(refused.prefix(8).joined(separator: ", ")): the broker, credentials and keys are set on the device, never remotely"
            )
        }
        if let type = try container.decodeIfPresent(String.self, forKey: Key(stringValue: "_type")), type != "configuration" {
            throw OwnTracksError.badCommand("setConfiguration's configuration has _type \"\(type)\", not \"configuration\"")
        }
        func number(_ name: String) throws -> Double? {
            let key = Key(stringValue: name)
            guard container.contains(key) else { return nil }
            if let value = try? container.decode(Double.self, forKey: key), value.isFinite { return value }
            if let text = try? container.decode(String.self, forKey: key), let value = Double(text.trimmed), value.isFinite { return value }
            throw OwnTracksError.badCommand("setConfiguration: \(name) is not a number")
        }
        if let mode = try number("monitoring") {
            guard let whole = Int(exactly: mode), (-1...2).contains(whole) else {
                throw OwnTracksError.badCommand("setConfiguration: monitoring must be -1 (quiet), 0 (manual), 1 (significant) or 2 (move), not \(mode)")
            }
            monitoring = whole
        }
        locatorDisplacement = try number("locatorDisplacement")
        locatorInterval = try number("locatorInterval")
    }
}

/// Any JSON value: how a server's answer is read before its messages are picked out.
enum JSONValue: Codable, Hashable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}
