public import FoundationEssentials
public import KeepAliveCore
public import KeepAliveMonitoring

/// The host's control protocol: one JSON object a line, over a Unix stream socket.
///
/// A client sends ``HostRequest``s; each gets one ``HostReply`` with the same `id`. An app's
/// connection (after `hello`) also receives ``HostNotice``s at any time: a line with a
/// `notice` key is a notice, one with `ok` a reply. Lines are at most ``maximumLineLength``
/// bytes; a longer line, or one that is not a request, gets an error reply and closes the
/// connection. Dates are seconds since 1970 (UTC).
public enum HostProtocol {
    /// The longest line either side accepts, in bytes.
    public static let maximumLineLength = 65_536
    /// The most sockets an app may name in `wake-on-data`.
    public static let maximumWakeSockets = 4

    /// Decodes one request line.
    ///
    /// - Throws: ``HostError/Code/badRequest`` saying what is wrong.
    public static func decodeRequest(_ line: some Collection<UInt8>) throws(HostError) -> HostRequest {
        guard line.count <= maximumLineLength else {
            throw HostError(.badRequest, "a request line is longer than \(maximumLineLength) bytes")
        }
        do {
            return try decoder().decode(HostRequest.self, from: Data(line))
        } catch {
            let text = String(decoding: line.prefix(80), as: UTF8.self)
            let why = (error as? DecodingError).map { " (\(Self.describe($0)))" } ?? ""
            throw HostError(.badRequest, "not a host request (one JSON object a line, with an op)\(why): \(text)")
        }
    }

    /// One value as a line, newline included.
    public static func encode(_ value: some Encodable) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .secondsSince1970
        var bytes = Array((try? encoder.encode(value)) ?? Data("{}".utf8))
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    /// What a decoding error says is wrong, with where (`conditions.home.radius`).
    private static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.map(\.stringValue).joined(separator: ".")
        }
        switch error {
        case .dataCorrupted(let context): return "\(path(context)): \(context.debugDescription)"
        case .keyNotFound(let key, let context):
            return "\(path(context).isEmpty ? "the request" : path(context)) needs \(key.stringValue)"
        case .typeMismatch(let type, let context): return "\(path(context)) must be \(type)"
        case .valueNotFound(let type, let context): return "\(path(context)) must be \(type), not null"
        @unknown default: return "\(error)"
        }
    }

    /// A decoder for the protocol's lines (dates in seconds since 1970).
    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return decoder
    }
}

/// A request to the host.
public struct HostRequest: Codable, Sendable, Hashable {
    /// What is asked (`op` on the wire).
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
        /// An app adds conditions for the host to watch while it is frozen or not running
        /// (`conditions`: by identifier; `assuming`: their state until a fix decides). Needs
        /// location authorized always, or when in use while in the foreground.
        case monitor
        /// An app removes conditions (`identifiers`).
        case unmonitor
        /// An app names its sockets (`sockets`: its descriptor numbers, at most
        /// ``HostProtocol/maximumWakeSockets``) whose first data wakes it while it is frozen, as a
        /// push does: a server's command waiting on them. Replaces the ones named before.
        case wakeOnData = "wake-on-data"
        /// Starts an app (`app`, `command`, `modes`, `output`, `user`) as the caller, or as `user`
        /// for a root caller: never as root unless the host allows it.
        case launch
        /// The compositor's part (`app`): the host's user only.
        case foreground, background, terminate
        /// Every app, or `app`.
        case status
    }

    /// Echoed in the reply, to pair them.
    public var id: Int?
    /// What is asked.
    public var op: Operation
    /// The application identifier.
    public var app: String?
    /// A background task's or a scheduled request's name.
    public var name: String?
    /// The app's own number for a background task.
    public var task: Int?
    /// `audio`, `location`: playing or not, in flight or not.
    public var active: Bool?
    /// `ack`: the notice answered.
    public var notice: String?
    /// `launch`: the background modes to run the app with.
    public var modes: [String]?
    /// `launch`: the program and its arguments.
    public var command: [String]?
    /// `launch`: a file for the app's standard output and error (opened as the app's user).
    public var output: String?
    /// `launch`: the user the app runs as (a root caller must name one; others may name only themselves).
    public var user: String?
    /// `schedule`: `refresh` or `processing`.
    public var kind: String?
    /// `schedule`: seconds from now before the work may run.
    public var earliest: Double?
    /// `schedule`: the work needs external power.
    public var power: Bool?
    /// `schedule`: the work needs a network.
    public var network: Bool?
    /// `complete`: whether the work succeeded.
    public var success: Bool?
    /// `monitor`: the conditions to add, by identifier (one of the same identifier is replaced).
    public var conditions: [String: MonitorCondition]?
    /// `monitor`: the state the added conditions start in (default `unknown`).
    public var assuming: MonitorState?
    /// `unmonitor`: the identifiers to remove.
    public var identifiers: [String]?
    /// `wake-on-data`: the app's socket descriptors.
    public var sockets: [Int32]?
    /// `launch`: variables the app gets beside the host's allow-list (`NAME=VALUE`).
    public var environment: [String: String]?

    /// A request with its operation and app; set the other fields the operation needs.
    public init(_ op: Operation, app: String? = nil) {
        self.op = op
        self.app = app
    }
}

/// The host's answer to one request.
public struct HostReply: Codable, Sendable, Hashable {
    /// The request's `id`.
    public var id: Int?
    /// Whether the request was done.
    public var ok: Bool
    /// Why not, in words.
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
    /// `schedule`: seconds from now the task may begin at the soonest, when the app's wake
    /// budget put it later than asked (``WakeBudget``).
    public var begins: Double?
    /// `status`.
    public var apps: [HostAppStatus]?
    /// `status`: the device's sleep, when the host follows it: `held awake for APP: WHY`
    /// (each app the rules let run, with its rule), `not held awake`, each with the way it is
    /// followed (`(through logind)`), or why it is not followed.
    public var device: String?
    /// `monitor`, `unmonitor`: the identifiers of the app's conditions now.
    public var identifiers: [String]?

    /// A reply to request `id`.
    public init(id: Int?, ok: Bool = true, error: String? = nil) {
        self.id = id
        self.ok = ok
        self.error = error
    }
}

/// Something the host tells an app without being asked.
public struct HostNotice: Codable, Sendable, Hashable {
    /// What the notice says.
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
        /// One of the app's conditions changed state (`monitorEvent`); `received` says when
        /// the fix reached the host. A frozen app was thawed for it, one not running launched.
        case locationEvent = "location-event"
    }

    /// What the notice says.
    public var notice: Kind
    /// `lifecycle`: `background` or `foreground`.
    public var event: String?
    /// `expiring`: the task's number.
    public var task: Int?
    /// `run-task`: the scheduled work's name.
    public var name: String?
    /// `will-suspend`: seconds the app has to `ack`.
    public var deadline: Double?
    /// `location-event`: the event, as ``LocationMonitor`` gives it.
    public var monitorEvent: MonitorEvent?
    /// `location-event`: when the fix that decided it reached the host, in seconds of the
    /// system's monotonic clock (`CLOCK_MONOTONIC`): an app subtracts it from its own reading
    /// of that clock to know how late it hears of the event.
    public var received: Double?

    /// A notice with the fields its kind uses.
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
    /// The application identifier.
    public var app: String
    /// `active`, `inactive`, `background`, `suspended`, `not running`.
    public var state: String
    /// Whether its processes are frozen now, as the kernel says (`cgroup.events`, `freezer.state`,
    /// or every process stopped): never only because the host asked.
    public var frozen: Bool
    /// When it entered this state (ISO 8601, UTC).
    public var since: String
    /// What keeps it alive now, each with how: a background task and its time left, audio
    /// (observed or reported), location with always, a scheduled task, or the policy's grace.
    public var alive: [String]
    /// Why it was suspended or killed, when it was.
    public var reason: String?
    /// Its first process, while it runs.
    public var pid: Int32?
    /// Its location authorization now.
    public var authorization: String
    /// CPU time the app's processes have used, seconds (the cgroup's own count with cgroup v2).
    public var cpu: Double
    /// The user its processes run as.
    public var user: String?
    /// Its processes found outside its group, each with its pid and where it went (it was killed for them).
    public var escaped: [String]?
    /// How many conditions the host watches for it (`nil`: it never asked).
    public var conditions: Int?
    /// Its wake budgets now: `data 0 of 1, events 10 of 10` (see ``WakeBudget``).
    public var wakes: String?
    /// Wakes its budgets put off, each with when it comes.
    public var waiting: [String]?
}
