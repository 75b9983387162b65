public import KeepAliveMonitoring

/// A request to the host.
public struct HostRequest: Codable, Sendable, Hashable {
    /// What is asked (`op` on the wire).
    public enum Operation: String, Codable, Sendable, Hashable, CaseIterable {
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
