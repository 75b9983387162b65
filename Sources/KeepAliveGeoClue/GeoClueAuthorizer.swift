import KeepAliveBus
import KeepAliveCore
import Logging

/// What a client may have now, by the authorization store and the app's state.
enum GeoClueAccess: Equatable {
    /// Locations, at most at this level (street when the store says reduced accuracy).
    case deliver(upTo: GeoClueAccuracy)
    /// None for now (when in use, out of use), and why.
    case paused(String)
    /// None: the store does not allow location for the app, and what to do about it.
    case denied(String)
}

/// The rule: the app's record in the host's authorization store decides.
///
/// - always: locations in the foreground and the background;
/// - when in use: for an app under the host, while the host has it in the foreground (active
///   or inactive); for an app outside it, while its process is in a logind session that is
///   active (the user's seat is in it: not locked away, not switched to another user). A
///   process in no session (a system service, a board without logind) is never in use;
/// - not determined, denied, restricted, or location services off: none.
///
/// A `Start` reads the record afresh; for running clients it is read again at most once a
/// second per app, so a change with `keepalive auth set` reaches them within a second.
final class GeoClueAuthorizer {
    private let file: @Sendable (String) -> AuthorizationFile
    private let apps: any GeoClueHostedApps
    private let sessions: LogindSessions
    private let logger: Logger
    private var managers: [String: (manager: LocationAuthorizationManager, read: Double)] = [:]

    init(file: @escaping @Sendable (String) -> AuthorizationFile, apps: any GeoClueHostedApps, sessions: LogindSessions, logger: Logger) {
        self.file = file
        self.apps = apps
        self.sessions = sessions
        self.logger = logger
    }

    func access(for client: GeoClueClient, now: Double, fresh: Bool = false) -> GeoClueAccess {
        let app = client.app
        let snapshot = snapshot(of: app, now: fresh ? .infinity : now)
        guard snapshot.locationServicesEnabled else {
            return .denied("location services are off on this machine (the system policy)")
        }
        let level: GeoClueAccuracy = snapshot.accuracy == .reduced ? .street : .exact
        switch snapshot.status {
        case .always:
            return .deliver(upTo: level)
        case .whenInUse:
            if client.hostedApp != nil {
                return apps.isInForeground(app)
                    ? .deliver(upTo: level) : .paused("\(app) is authorized when in use and is in the background under the host")
            }
            return sessions.isInActiveSession(client.pid)
                ? .deliver(upTo: level)
                : .paused(
                    "\(app) is authorized when in use, and its process \(client.pid) is in no active logind session "
                        + "(launch it under the host, or allow it always: keepalive auth set always --app \(app))"
                )
        case .notDetermined, .denied, .restricted:
            let allow = snapshot.status == .restricted
                ? "the system policy restricts it"
                : "allow it with `keepalive auth set when-in-use --app \(app)` (or always, for the background)"
            return .denied("location is \(snapshot.status) for \(app) in the host's authorization store: \(allow)")
        }
    }

    private func snapshot(of app: String, now: Double) -> AuthorizationSnapshot {
        if let known = managers[app] {
            if now - known.read >= 1 {
                known.manager.reload()
                managers[app]?.read = min(now, GeoClueServer.now())
            }
            return known.manager.snapshot
        }
        if managers.count > 1_000 { managers.removeAll() }  // DesktopIds are the clients' to choose
        let manager = LocationAuthorizationManager(application: app, file: file(app), logger: logger)
        managers[app] = (manager, GeoClueServer.now())
        return manager.snapshot
    }
}
