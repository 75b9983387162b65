import FoundationEssentials
import KeepAliveCore
import KeepAliveGeoClue
import KeepAliveHost

/// The host's answers to the GeoClue2 service: which app a process is, and whether it is in
/// the foreground (both readable off the host's executor).
struct HostedAppsForGeoClue: GeoClueHostedApps {
    let host: AppHost
    func app(of pid: Int32) -> String? { host.app(of: pid) }
    func isInForeground(_ app: String) -> Bool { host.isInForeground(app) }
}

extension HostOutput {
    func write(_ event: GeoClueService.Event) {
        var object = JSONLine(["time": .time(Date())])
        let text: String
        switch event {
        case .started(let name):
            object["event"] = "geoclue"
            object["name"] = .string(name)
            text = "GeoClue2: serving \(name) on the system bus"
        case .clientStarted(let client, let app, let accuracy):
            object["event"] = "geoclue-client"
            object["client"] = .string(client)
            object["app"] = .string(app)
            object["accuracy"] = .string("\(accuracy)")
            text = "GeoClue2: \(client) (\(app)) started at \(accuracy) accuracy"
        case .clientStopped(let client, let reason):
            object["event"] = "geoclue-client"
            object["client"] = .string(client)
            object["stopped"] = .string(reason)
            text = "GeoClue2: \(client) stopped: \(reason)"
        case .agent(let user, let id, let connection, let gone):
            object["event"] = "geoclue-agent"
            object["user"] = .integer(Int(user))
            object["agent"] = .string(id)
            object["connection"] = .string(connection)
            if gone { object["gone"] = .bool(true) }
            text = "GeoClue2: \(id) (\(connection)) \(gone ? "left; user \(user) has no agent now" : "is user \(user)'s agent")"
        case .refused(let why):
            object["event"] = "refused"
            object["message"] = .string("GeoClue2: \(why)")
            text = "refused: GeoClue2: \(why)"
        case .failed(let why):
            write(AppHost.Event.error(why))
            return
        }
        if json { Console.out(object.bytes) } else { Console.out(text + "\n") }
    }
}

extension KeepAlive.HostCommand.Serve {
    /// Serves GeoClue2 from `host`'s watch, when `--geoclue` asks.
    func startGeoClue(_ host: AppHost, _ configuration: AppHost.Configuration, output: HostOutput) throws -> GeoClueService? {
        guard geoclue else { return nil }
        let service = try GeoClueService(
            configuration: GeoClueService.Configuration(authorizationFile: configuration.authorizationFile),
            apps: HostedAppsForGeoClue(host: host),
            watch: { wanted in host.setFixesWanted(wanted, by: "geoclue") },  // in order, never waited for
            emit: { output.write($0) }
        )
        host.observeFixes { service.fixArrived($0) }
        return service
    }
}
