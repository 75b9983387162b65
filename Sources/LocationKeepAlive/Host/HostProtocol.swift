import FoundationEssentials

/// The host's control protocol: one JSON object a line, over a Unix stream socket.
///
/// A client sends ``HostRequest``s; each gets one ``HostReply`` with the same `id`. An app's
/// connection (after `hello`) also receives ``HostNotice``s at any time: a line with a
/// `notice` key is a notice, one with `ok` a reply. Lines are at most ``maximumLineLength``
/// bytes; a longer line, or one that is not a request, gets an error reply and closes the
/// connection.
public enum HostProtocol {
    public static let maximumLineLength = 65_536

    /// Decodes one request line.
    ///
    /// - Throws: ``HostError/Code/badRequest`` saying what is wrong.
    public static func decodeRequest(_ line: some Collection<UInt8>) throws(HostError) -> HostRequest {
        guard line.count <= maximumLineLength else {
            throw HostError(.badRequest, "a request line is longer than \(maximumLineLength) bytes")
        }
        do {
            return try JSONDecoder().decode(HostRequest.self, from: Data(line))
        } catch {
            let text = String(decoding: line.prefix(80), as: UTF8.self)
            throw HostError(.badRequest, "not a host request (one JSON object a line, with an op): \(text)")
        }
    }

    /// One value as a line, newline included.
    public static func encode(_ value: some Encodable) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var bytes = Array((try? encoder.encode(value)) ?? Data("{}".utf8))
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }
}

/// A request to the host.
public struct HostRequest: Codable, Sendable, Hashable {
    public enum Operation: String, Codable, Sendable, Hashable {
        /// An app names itself (`app`); the host checks that the caller's process is in it.
        case hello
        /// An app begins a background task (`task`: the app's own number for it, `name`).
        case beginTask = "begin-task"
        /// An app ends a background task (`task`).
        case endTask = "end-task"
        /// An app reports audio playing or not (`active`).
        case audio
        /// An app reports a location request in flight, or continuous updates, or none (`active`).
        case location
        /// An app answers a notice (`notice`: `will-suspend`).
        case ack
        /// An app asks for scheduled background work (`name`, `kind`, `earliest`, `power`, `network`).
        case schedule
        /// An app ends scheduled work it was woken for (`name`, `success`).
        case complete
        /// Starts an app (`app`, `command`, `modes`, `output`): the host's user only.
        case launch
        /// The compositor's part (`app`): the host's user only.
        case foreground, background, terminate
        /// Every app, or `app`.
        case status
    }

    public var id: Int?
    public var op: Operation
    public var app: String?
    public var name: String?
    public var task: Int?
    public var active: Bool?
    public var notice: String?
    public var modes: [String]?
    public var command: [String]?
    public var output: String?
    public var kind: String?
    /// Seconds from now.
    public var earliest: Double?
    public var power: Bool?
    public var network: Bool?
    public var success: Bool?

    public init(_ op: Operation, app: String? = nil) {
        self.op = op
        self.app = app
    }
}

/// The host's answer to one request.
public struct HostReply: Codable, Sendable, Hashable {
    public var id: Int?
    public var ok: Bool
    public var error: String?
    /// `hello`: the rules the app runs under.
    public var profile: ExecutionProfile?
    /// `hello`: the app's state now.
    public var state: String?
    /// `hello`: the background modes the app was launched with.
    public var modes: [String]?
    /// `begin-task`: background time left, seconds (`nil`: unbounded).
    public var remaining: Double?
    /// `begin-task`: false when the task was refused (the app is not running).
    public var granted: Bool?
    /// `launch`: the app's first process.
    public var pid: Int32?
    /// `status`.
    public var apps: [HostAppStatus]?

    public init(id: Int?, ok: Bool = true, error: String? = nil) {
        self.id = id
        self.ok = ok
        self.error = error
    }
}

/// Something the host tells an app without being asked.
public struct HostNotice: Codable, Sendable, Hashable {
    public enum Kind: String, Codable, Sendable, Hashable {
        /// The compositor moved the app (`event`: `background`, `foreground`).
        case lifecycle
        /// The app is about to be frozen: stop watching, drain audio, then `ack` within `deadline` seconds.
        case willSuspend = "will-suspend"
        /// The app was thawed: anything that waited in its sockets is old.
        case didResume = "did-resume"
        /// A background task's time is nearly up (`task`): end it.
        case expiring
        /// Scheduled work is due (`name`): do it, then `complete`.
        case runTask = "run-task"
        /// The host asks the app to stop.
        case terminate
    }

    public var notice: Kind
    public var event: String?
    public var task: Int?
    public var name: String?
    public var deadline: Double?

    public init(_ notice: Kind, event: String? = nil, task: Int? = nil, name: String? = nil, deadline: Double? = nil) {
        self.notice = notice
        self.event = event
        self.task = task
        self.name = name
        self.deadline = deadline
    }
}

/// One app as `keepalive host status` shows it.
public struct HostAppStatus: Codable, Sendable, Hashable {
    public var app: String
    /// `active`, `inactive`, `background`, `suspended`, `not running`.
    public var state: String
    public var frozen: Bool
    /// When it entered this state (ISO 8601, UTC).
    public var since: String
    /// What keeps it alive now, each with how: a background task and its time left, audio
    /// (observed or reported), location with always, a scheduled task, or the policy's grace.
    public var alive: [String]
    /// Why it was suspended or killed, when it was.
    public var reason: String?
    public var pid: Int32?
    public var authorization: String
    /// CPU time the app's processes have used, seconds (the cgroup's own count with cgroup v2).
    public var cpu: Double
}
