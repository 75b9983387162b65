package import KeepAliveCore
package import KeepAliveMonitoring

/// A request of the control protocol, typed: what each operation needs, read and checked once,
/// as it arrives (the wire's ``HostRequest`` is one object whose every field is optional), and
/// made so by the clients (``request``), who never set the wire's fields one by one.
package enum HostCommand: Sendable, Hashable {
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
    package enum AppReport: Sendable, Hashable {
        case beginTask(number: Int, name: String)
        case endTask(number: Int)
        case audio(active: Bool)
        case location(active: Bool)
        case schedule(ScheduleRequest)
        case complete(name: String?, success: Bool)
        case ack(notice: String)
    }

    /// Scheduled work an app asks for (`schedule`).
    package struct ScheduleRequest: Sendable, Hashable {
        package var name: String
        package var kind: BackgroundTaskRequest.Kind
        /// Seconds from now it may begin at the earliest (`nil`: now).
        package var earliest: Double?
        package var power: Bool
        package var network: Bool

        package init(name: String, kind: BackgroundTaskRequest.Kind, earliest: Double?, power: Bool, network: Bool) {
            (self.name, self.kind, self.earliest, self.power, self.network) = (name, kind, earliest, power, network)
        }
    }

    /// An app to launch (`launch`).
    package struct LaunchRequest: Sendable, Hashable {
        package var app: String
        package var modes: BackgroundModes
        package var command: [String]
        package var environment: [String: String]
        package var output: String?
        package var user: String?
        /// Launched in the background (`active: false`).
        package var inBackground: Bool

        package init(
            app: String,
            modes: BackgroundModes,
            command: [String],
            environment: [String: String] = [:],
            output: String? = nil,
            user: String? = nil,
            inBackground: Bool = false
        ) {
            (self.app, self.modes, self.command, self.environment) = (app, modes, command, environment)
            (self.output, self.user, self.inBackground) = (output, user, inBackground)
        }
    }

    /// The compositor's moves and the user's quit.
    package enum Move: Sendable, Hashable {
        case foreground, background, terminate
    }

    /// Whether an app's process may ask it on the apps' socket: `hello` and what an app says
    /// of itself; launches, moves and `status` go to the host's control socket.
    package var isAnAppsOwn: Bool {
        switch self {
        case .hello, .report, .monitor, .unmonitor, .wakeOnData: true
        case .launch, .move, .status: false
        }
    }

    /// Reads `request`, with every field its operation needs.
    ///
    /// - Throws: ``HostError/Code/badRequest`` naming what is missing or wrong.
    package init(_ request: HostRequest) throws(HostError) {
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

    /// The command on the wire: what a client sends, and what ``init(_:)`` reads back the same.
    package var request: HostRequest {
        switch self {
        case .hello(let app): return HostRequest(.hello, app: app)
        case .report(let report): return report.request
        case .monitor(let app, let conditions, let assuming):
            var request = HostRequest(.monitor, app: app)
            request.conditions = conditions
            request.assuming = assuming
            return request
        case .unmonitor(let app, let identifiers):
            var request = HostRequest(.unmonitor, app: app)
            request.identifiers = identifiers
            return request
        case .wakeOnData(let sockets):
            var request = HostRequest(.wakeOnData)
            request.sockets = sockets
            return request
        case .launch(let launch): return launch.request
        case .move(let move, let app):
            switch move {
            case .foreground: return HostRequest(.foreground, app: app)
            case .background: return HostRequest(.background, app: app)
            case .terminate: return HostRequest(.terminate, app: app)
            }
        case .status(let app): return HostRequest(.status, app: app)
        }
    }
}

extension HostCommand.AppReport {
    /// The report on the wire.
    package var request: HostRequest {
        var request: HostRequest
        switch self {
        case .beginTask(let number, let name):
            request = HostRequest(.beginTask)
            (request.task, request.name) = (number, name)
        case .endTask(let number):
            request = HostRequest(.endTask)
            request.task = number
        case .audio(let active):
            request = HostRequest(.audio)
            request.active = active
        case .location(let active):
            request = HostRequest(.location)
            request.active = active
        case .schedule(let schedule):
            request = HostRequest(.schedule)
            (request.name, request.kind, request.earliest) = (schedule.name, schedule.kind.rawValue, schedule.earliest)
            (request.power, request.network) = (schedule.power, schedule.network)
        case .complete(let name, let success):
            request = HostRequest(.complete)
            (request.name, request.success) = (name, success)
        case .ack(let notice):
            request = HostRequest(.ack)
            request.notice = notice
        }
        return request
    }
}

extension HostCommand.LaunchRequest {
    /// The launch on the wire.
    package var request: HostRequest {
        var request = HostRequest(.launch, app: app)
        (request.modes, request.command, request.output, request.user) = (modes.names, command, output, user)
        request.environment = environment.isEmpty ? nil : environment
        request.active = !inBackground
        return request
    }
}
