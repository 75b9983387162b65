import Dispatch
import FoundationEssentials
import Glibc
public import KeepAliveCore
import KeepAliveHostProtocol
import KeepAliveMonitoring

/// The host as the device's location service: one watch of the receiver for every app's
/// conditions, and the app woken, or launched, for each of its events.
extension AppHost {
    /// `monitor`: adds the caller's conditions (all or none). One the app already has, unchanged,
    /// keeps its state and last event: an app that registers its conditions at every launch
    /// hears no second entry.
    func addConditions(
        _ wanted: [String: MonitorCondition],
        assuming: MonitorState,
        naming named: String?,
        by app: HostedApp
    ) async throws(HostError) -> HostReply {
        try requireOwnApp(named, app, "add conditions")
        try requireMonitoringAllowed(app)
        let monitor = try monitor(of: app)
        let conditions = wanted.filter { monitor.record(for: $0.key)?.condition != $0.value }
        let added = conditions.keys.filter { monitor.record(for: $0) == nil }.count
        let limit = configuration.maximumConditionsPerApp
        guard monitor.identifiers.count + added <= limit else {
            throw HostError(
                .notPermitted,
                "app \(app.id) has \(monitor.identifiers.count) conditions and may have at most \(limit) under this host: "
                    + "\(added) more were refused, none added. Remove some first"
            )
        }
        do {
            try await files.awaiting { () throws(MonitoringError) in try monitor.add(conditions, assuming: assuming) }
        } catch {
            throw HostError(.badRequest, "app \(app.id): \(error.message); none added")
        }
        decide(.conditions(app.id, hasSome: !monitor.identifiers.isEmpty))
        var reply = HostReply(id: nil)
        reply.identifiers = monitor.identifiers
        return reply
    }

    /// `unmonitor`: removes the caller's conditions by identifier.
    func removeConditions(_ identifiers: [String], naming named: String?, by app: HostedApp) async throws(HostError) -> HostReply {
        try requireOwnApp(named, app, "remove conditions")
        let monitor = try monitor(of: app)
        do {
            try await files.awaiting { () throws(MonitoringError) in
                for identifier in identifiers { try monitor.remove(identifier) }
            }
        } catch {
            throw HostError(.badRequest, "app \(app.id): \(error.message)")
        }
        decide(.conditions(app.id, hasSome: !monitor.identifiers.isEmpty))
        var reply = HostReply(id: nil)
        reply.identifiers = monitor.identifiers
        return reply
    }

    /// A condition belongs to the app whose process asks: naming another is refused.
    private func requireOwnApp(_ named: String?, _ app: HostedApp, _ what: String) throws(HostError) {
        if let named, named != app.id {
            throw HostError(
                .notPermitted,
                "this connection speaks for app \(app.id): it may \(what) only for itself, not for \(named)"
            )
        }
    }

    /// As on iOS: always monitors from anywhere; when in use only from the foreground.
    private func requireMonitoringAllowed(_ app: HostedApp) throws(HostError) {
        let authorization = value(of: app)?.model.authorization ?? .notDetermined
        guard !authorization.allowsLocation(in: state(of: app)) else { return }
        switch authorization {
        case .whenInUse:
            throw HostError(
                .notPermitted,
                "app \(app.id) is authorized for location only when in use: it may monitor only while in the foreground, "
                    + "and its conditions are watched only then. Authorize it always to monitor from the background "
                    + "(keepalive auth set \(app.id) always)"
            )
        default:
            throw HostError(
                .notPermitted,
                "app \(app.id) is not authorized for location (\(authorization.rawValue)): "
                    + "authorize it always, or when in use to monitor in the foreground"
            )
        }
    }

    /// The app's monitor: kept in memory, or restored from its file.
    func monitor(of app: HostedApp) throws(HostError) -> LocationMonitor {
        if let monitor = app.monitor { return monitor }
        let file = configuration.monitorFolder?.appendingPathComponent("\(app.id).json")
        do {
            let monitor = try LocationMonitor(named: app.id, file: file, logger: logger)
            app.monitor = monitor
            return monitor
        } catch {
            throw HostError(.badRequest, "app \(app.id): \(error.message)")
        }
    }

    /// Restores the conditions an earlier launch (or host) saved for `app`, if any.
    func restoreConditions(of app: HostedApp) {
        guard app.monitor == nil, let folder = configuration.monitorFolder,
            FileManager.default.fileExists(atPath: folder.appendingPathComponent("\(app.id).json").path)
        else { return }
        do {
            decide(.conditions(app.id, hasSome: !(try monitor(of: app)).identifiers.isEmpty))
        } catch {
            emit(.error("\(error.message); its conditions are not watched until the file is mended or removed"))
        }
    }


    /// Keeps the receiver watched while `service` (a name, such as "geoclue") wants fixes.
    ///
    /// Callable from any thread, without waiting: the host decides the wants in the order they
    /// were said (a "wanted" and the "unwanted" after it never land the other way round), from
    /// the moment ``run()`` serves.
    public nonisolated func setFixesWanted(_ wanted: Bool, by service: String) {
        wants.yield((wanted, service))
    }

    /// Hands every fix of the host's watch to `observer`, on the watch's task, as it arrives
    /// (before the apps' conditions are evaluated).
    public nonisolated func observeFixes(_ observer: @escaping @Sendable (Location) -> Void) {
        fixObservers.withLock { $0.append(observer) }
    }

    /// The host's app whose group holds `pid`, if any (from any thread).
    public nonisolated func app(of pid: Int32) -> String? { membership.app(of: pid) }

    /// Whether the host's app `app` is in the foreground (active or inactive) now, from any thread.
    public nonisolated func isInForeground(_ app: String) -> Bool { foregroundApps.read { $0.contains(app) } }

    /// Evaluates every watched app's conditions on a fix, and tells each app its events.
    func fixArrived(_ arrival: HostLocationWatch.Arrival) {
        guard machine.isWatching else { return }  // a fix of a watch closed since
        var changed: [LocationMonitor] = []
        let watched = machine.watchedApps
        for app in apps.values.sorted(by: { $0.id < $1.id }) where watched.contains(app.id) {
            guard let monitor = app.monitor else { continue }
            let events = monitor.evaluateBeforeSaving(arrival.fix)
            for event in events { handle(.locationEvent(.locationEvent(event, received: arrival.received)), for: app) }
            if !events.isEmpty { changed.append(monitor) }
        }
        guard !changed.isEmpty else { return }
        // The files' fsyncs on the host's queue for files, after every app was told: a slow disk
        // (100 ms and more, measured beside a build) delays neither a wake nor the host.
        files.async { [changed] in for monitor in changed { monitor.saveEvents() } }
    }

    /// Launches an app that is not running, in the background, for `reason` (`location-event`,
    /// `scheduled-task`): `KEEPALIVE_LAUNCH_REASON` in its environment.
    func relaunch(_ app: HostedApp, reason: String) {
        guard let spec = app.launchSpec else { return }
        let id = app.id
        spawn {
            do {
                _ = try await self.start(id, spec, reason: reason, inBackground: true)
            } catch {
                self.emit(.error("cannot launch \(id) for its \(reason): \(error.message)"))  // its machine was told by the launch
            }
        }
    }
}
