import Glibc
import KeepAliveCore
import KeepAliveHostProtocol

/// Who may ask what of the host: the control protocol's rules on its callers, each a check
/// that throws the error the caller reads. Made by ``AppHost`` for each request, over its apps.
struct HostAccess {
    let apps: [String: HostedApp]

    /// The app `name` names; a request without one, or naming none of the host's, is refused
    /// with the apps there are.
    func app(named name: String?) throws(HostError) -> HostedApp {
        guard let name else { throw HostError(.badRequest, "this request needs app") }
        guard let app = apps[name] else {
            let known = apps.keys.sorted()
            throw HostError(
                .unknownApp,
                "no app \(name) under this host" + (known.isEmpty ? "" : " (apps: \(known.joined(separator: ", ")))")
            )
        }
        return app
    }

    /// The app whose process sent this (after its `hello`).
    func caller(_ connection: ControlConnection) throws(HostError) -> HostedApp {
        guard let app = apps.values.first(where: { $0.connection === connection }) else {
            throw HostError(.badRequest, "say hello with your app id first")
        }
        return app
    }

    /// Moving or stopping an app: root, the host's user, or the user the app runs as.
    func requireOwner(of app: HostedApp, _ connection: ControlConnection) throws(HostError) {
        let uid = connection.peer.uid
        guard uid == 0 || uid == UInt32(geteuid()) || uid == app.user.uid else {
            throw HostError(
                .notPermitted,
                "app \(app.id) runs as \(app.user.name): only that user, the host's user or root may move or stop it"
            )
        }
    }

    /// Lifecycle commands and launches come from outside every app.
    func requireOutsideEveryApp(_ connection: ControlConnection) throws(HostError) {
        if let app = apps.values.first(where: { $0.pid != nil && $0.group.contains(connection.pid) }) {
            throw HostError(.notPermitted, "process \(connection.pid) belongs to app \(app.id): an app may not move apps")
        }
    }

    /// A condition belongs to the app whose process asks: naming another is refused.
    static func requireOwnApp(_ named: String?, _ app: HostedApp, _ what: String) throws(HostError) {
        if let named, named != app.id {
            throw HostError(.notPermitted, "this connection speaks for app \(app.id): it may \(what) only for itself, not for \(named)")
        }
    }

    /// As on iOS: always monitors from anywhere; when in use only from the foreground.
    static func requireMonitoringAllowed(_ id: String, _ authorization: LocationAuthorization, in state: AppState) throws(HostError) {
        guard !authorization.allowsLocation(in: state) else { return }
        switch authorization {
        case .whenInUse:
            throw HostError(
                .notPermitted,
                "app \(id) is authorized for location only when in use: it may monitor only while in the foreground, "
                    + "and its conditions are watched only then. Authorize it always to monitor from the background "
                    + "(keepalive auth set \(id) always)"
            )
        default:
            throw HostError(
                .notPermitted,
                "app \(id) is not authorized for location (\(authorization.rawValue)): "
                    + "authorize it always, or when in use to monitor in the foreground"
            )
        }
    }
}
