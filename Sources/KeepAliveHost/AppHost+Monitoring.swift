import Dispatch
import FoundationEssentials
import Glibc
public import KeepAliveCore
import KeepAliveHostProtocol
import KeepAliveMonitoring

/// The host as the device's location service: one watch of the receiver for every app's
/// conditions, and the app woken, or launched, for each of its events.
extension AppHost {
    /// `monitor`: adds the caller's conditions (all or none), as long as it may monitor.
    func addConditions(
        _ wanted: [String: MonitorCondition],
        assuming: MonitorState,
        naming named: String?,
        by app: HostedApp
    ) async throws(HostError) -> HostReply {
        try HostAccess.requireOwnApp(named, app, "add conditions")
        try HostAccess.requireMonitoringAllowed(app.id, value(of: app)?.model.authorization ?? .notDetermined, in: state(of: app))
        let limit = configuration.maximumConditionsPerApp
        return conditionsChanged(app, try await monitor(of: app).add(wanted, assuming: assuming, forApp: app.id, limit: limit, on: files))
    }

    /// `unmonitor`: removes the caller's conditions by identifier.
    func removeConditions(_ identifiers: [String], naming named: String?, by app: HostedApp) async throws(HostError) -> HostReply {
        try HostAccess.requireOwnApp(named, app, "remove conditions")
        return conditionsChanged(app, try await monitor(of: app).remove(identifiers, forApp: app.id, on: files))
    }

    /// The app's conditions are now `identifiers`: the host's machine hears it, the app is told.
    private func conditionsChanged(_ app: HostedApp, _ identifiers: [String]) -> HostReply {
        decide(.conditions(app.id, hasSome: !identifiers.isEmpty))
        var reply = HostReply(id: nil)
        reply.identifiers = identifiers
        return reply
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
