import KeepAliveCore
import KeepAliveMonitoring

/// A request of the control protocol, typed: what each operation needs, read and checked once,
/// as it arrives (the wire's ``HostRequest`` is one object whose every field is optional).
enum HostCommand: Sendable {
    /// An app's process names its app.
    case hello(app: String?)
    /// An app's reports of itself (after `hello`).
    case report(AppReport)
    /// The caller's conditions: added (`monitor`), removed (`unmonitor`); `app`, if named, must be its own.
    case monitor(app: String?, conditions: [String: MonitorCondition], assuming: MonitorState)
    case unmonitor(app: String?, identifiers: [String])
    /// Sockets of the caller's whose data wakes it while frozen.
    case wakeOnData(sockets: [Int32])
    /// Launch an app.
    case launch(LaunchRequest)
    /// The compositor moves an app, or the user quits it.
    case move(Move, app: String?)
    /// What the host runs (`app`: one of them).
    case status(app: String?)

    /// What an app says of itself.
    enum AppReport: Sendable {
        case beginTask(number: Int, name: String)
        case endTask(number: Int)
        case audio(active: Bool)
        case location(active: Bool)
        case schedule(ScheduleRequest)
        case complete(name: String?, success: Bool)
        case ack(notice: String)
    }

    /// Scheduled work an app asks for (`schedule`).
    struct ScheduleRequest: Sendable {
        var name: String
        var kind: BackgroundTaskRequest.Kind
        /// Seconds from now it may begin at the earliest (`nil`: now).
        var earliest: Double?
        var power: Bool
        var network: Bool
    }

    /// An app to launch (`launch`).
    struct LaunchRequest: Sendable {
        var app: String
        var modes: BackgroundModes
        var command: [String]
        var environment: [String: String]
        var output: String?
        var user: String?
        /// Launched in the background (`active: false`).
        var inBackground: Bool
    }

    /// The compositor's moves and the user's quit.
    enum Move: Sendable {
        case foreground, background, terminate
    }

    /// Reads `request`, with every field its operation needs.
    ///
    /// - Throws: ``HostError/Code/badRequest`` naming what is missing or wrong.
    init(_ request: HostRequest) throws(HostError) {
        switch request.op {
        case .hello: self = .hello(app: request.app)
        case .beginTask:
            guard let number = request.task else { throw HostError(.badRequest, "begin-task needs task (a number)") }
            self = .report(.beginTask(number: number, name: request.name ?? "background task"))
        case .endTask:
            guard let number = request.task else { throw HostError(.badRequest, "end-task needs task (a number)") }
            self = .report(.endTask(number: number))
        case .audio:
            guard let active = request.active else { throw HostError(.badRequest, "audio needs active (true or false)") }
            self = .report(.audio(active: active))
        case .location:
            guard let active = request.active else { throw HostError(.badRequest, "location needs active (true or false)") }
            self = .report(.location(active: active))
        case .schedule: self = .report(.schedule(try Self.schedule(request)))
        case .complete: self = .report(.complete(name: request.name, success: request.success ?? true))
        case .ack:
            guard let notice = request.notice else { throw HostError(.badRequest, "ack needs notice") }
            self = .report(.ack(notice: notice))
        case .monitor:
            self = .monitor(app: request.app, conditions: request.conditions ?? [:], assuming: request.assuming ?? .unknown)
        case .unmonitor: self = .unmonitor(app: request.app, identifiers: request.identifiers ?? [])
        case .wakeOnData: self = .wakeOnData(sockets: request.sockets ?? [])
        case .launch: self = .launch(try Self.launch(request))
        case .foreground: self = .move(.foreground, app: request.app)
        case .background: self = .move(.background, app: request.app)
        case .terminate: self = .move(.terminate, app: request.app)
        case .status: self = .status(app: request.app)
        }
    }

    private static func schedule(_ request: HostRequest) throws(HostError) -> ScheduleRequest {
        guard let name = request.name, !name.isEmpty else { throw HostError(.badRequest, "schedule needs name") }
        guard let kind = BackgroundTaskRequest.Kind(rawValue: request.kind ?? "refresh") else {
            throw HostError(.badRequest, "schedule kind is refresh or processing, not \(request.kind ?? "")")
        }
        return ScheduleRequest(
            name: name, kind: kind, earliest: request.earliest, power: request.power ?? false, network: request.network ?? false
        )
    }

    private static func launch(_ request: HostRequest) throws(HostError) -> LaunchRequest {
        guard let id = request.app, !id.isEmpty, id.allSatisfy({ $0.isLetter || $0.isNumber || "._-".contains($0) }),
            id != ".", id != ".."
        else {
            throw HostError(.badRequest, "launch needs an app id of letters, digits, '.', '_' or '-'")
        }
        guard let modes = BackgroundModes(parsing: (request.modes ?? []).joined(separator: ",")) else {
            throw HostError(.badRequest, "modes are audio, location, fetch, processing: not \(request.modes ?? [])")
        }
        guard let command = request.command, !command.isEmpty else {
            throw HostError(.badRequest, "launch needs a command")
        }
        let environment = request.environment ?? [:]
        if let bad = environment.keys.first(where: { $0.isEmpty || $0.contains("=") || $0.utf8.contains(0) })
            ?? environment.values.first(where: { $0.utf8.contains(0) }) {
            throw HostError(.badRequest, "launch environment: '\(bad)' is not a variable name or value")
        }
        return LaunchRequest(
            app: id, modes: modes, command: command, environment: environment, output: request.output, user: request.user,
            inBackground: request.active == false
        )
    }
}
