import FoundationEssentials
import Glibc
import KeepAliveCore
import KeepAliveHostProtocol

/// The control protocol's requests: who may ask what, and what it does to the model.
extension AppHost {
    func handle(_ request: HostRequest, from connection: ControlConnection) async -> HostReply? {
        decide(.request)  // the models brought to now: what the request reads and changes is current
        do {
            var reply = try await perform(request, from: connection)
            reply.id = request.id
            return reply
        } catch {
            if error.code == .notPermitted || error.code == .badRequest { emit(.refused(error.message)) }
            return HostReply(id: request.id, ok: false, error: error.message)
        }
    }

    /// Who may ask what, over the apps now.
    private var access: HostAccess { HostAccess(apps: apps) }

    private func perform(
        _ request: HostRequest,
        from connection: ControlConnection
    ) async throws(HostError) -> HostReply {
        let command = try HostCommand(request)
        if connection.isApp, !command.isAnAppsOwn {
            throw HostError(
                .notPermitted,
                "the apps' socket serves hello and an app's reports: \(request.op.rawValue) goes to the host's control socket"
            )
        }
        switch command {
        case .hello(let app): return try hello(app, from: connection)
        case .report(let report): return try self.report(report, by: try access.caller(connection))
        case .monitor(let named, let conditions, let assuming):
            return try await addConditions(conditions, assuming: assuming, naming: named, by: try access.caller(connection))
        case .unmonitor(let named, let identifiers):
            return try await removeConditions(identifiers, naming: named, by: try access.caller(connection))
        case .wakeOnData(let sockets): return try wakeOnData(sockets, by: try access.caller(connection), from: connection)
        case .launch(let launch):
            try access.requireOutsideEveryApp(connection)
            return try await self.launch(launch, by: connection.peer)
        case .move(let move, let named):
            try access.requireOutsideEveryApp(connection)
            let app = try access.app(named: named)
            try access.requireOwner(of: app, connection)
            switch move {
            case .foreground: change(app) { $0.model.enterForeground() }
            case .background: await moveToBackground(app)
            case .terminate: await quit(app)
            }
            var reply = HostReply(id: nil)
            reply.state = app.status(value(of: app)).state
            return reply
        case .status(let named):
            var reply = HostReply(id: nil)
            let shown = if let named { [try access.app(named: named)] } else { Array(apps.values) }
            // Suspended apps are verified again as they are shown (the v1 freezer and signals
            // give no event when a process leaves): status shows what is, never what was asked.
            for app in shown where state(of: app) == .suspended { await checkContainment(app) }
            reply.apps = shown.sorted { $0.id < $1.id }.map { $0.status(value(of: $0)) }
            reply.device = deviceStatus
            return reply
        }
    }

    /// The user's quit (`terminate`): as an iOS user's, the app is not launched again for its
    /// events; its record says so before it is stopped, so that no host launches it again.
    private func quit(_ app: HostedApp) async {
        app.reason = "terminated by request"
        handle(.quitByUser, for: app)
        saveRecord(of: app)
        await recordsSaved()
        change(app) { $0.model.terminate() }
    }

    /// `hello`: the caller names its app; its process must be in that app's group.
    private func hello(_ name: String?, from connection: ControlConnection) throws(HostError) -> HostReply {
        let app = try access.app(named: name)
        guard app.group.contains(connection.pid) else {
            throw HostError(
                .notPermitted,
                "process \(connection.pid) is not in app \(app.id)'s group: a process may speak only for its own app"
            )
        }
        app.connection = connection
        connection.identifyAsApp()
        change(app) { $0.isConnected = true }
        let value = value(of: app)
        var reply = HostReply(id: nil)
        reply.profile = value?.model.profile
        reply.modes = value?.model.backgroundModes.names
        reply.state = value?.machine.entersBackgroundOnHello == true ? AppState.background.rawValue : app.status(value).state
        spawn { self.handle(.saidHello, for: app) }  // after this reply: its background, the events it was launched for
        return reply
    }

    /// What an app reports of itself, after `hello`: its model and reports change in the host's
    /// machine, which decides what follows.
    private func report(_ report: HostCommand.AppReport, by app: HostedApp) throws(HostError) -> HostReply {
        var reply = HostReply(id: nil)
        switch report {
        case .beginTask(let number, let name):
            // Its host-side task is about to run out: the app should end it.
            let expiring: () -> Void = { [weak self, id = app.id] in self?.assumeIsolated { $0.apps[id]?.connection?.send(.taskExpiring(number)) } }
            let begun = change(app) { $0.beginTask(number, named: name, expiring: expiring) }
            (reply.granted, reply.remaining) = (begun?.granted, begun?.remaining?.secondsValue)
        case .endTask(let number): change(app) { $0.endTask(number) }
        case .audio(let active):
            if change(app, { $0.reportAudio(active) }) == true {
                throw HostError(.notPermitted, "app \(app.id) has no audio background mode: launch it with --modes audio")
            }
        case .location(let active):
            if let refused = change(app, { $0.reportLocation(active) }) ?? nil {
                throw HostError(.notPermitted, "app \(app.id): \(refused.message)")
            }
        case .schedule(let request): reply.begins = try schedule(request, by: app)
        case .complete(let name, let success):
            guard change(app, { $0.completeScheduledTask(named: name, success: success) }) == true else {
                throw HostError(.badRequest, "no scheduled task \(name ?? "(no name)") is running for \(app.id)")
            }
        case .ack(let notice):
            app.answered.insert(notice)
            app.acknowledge(notice)
        }
        return reply
    }

    /// `schedule`: scheduled work, begun no sooner than the app's wake budget allows; its
    /// launch record keeps it.
    ///
    /// - Returns: in how many seconds it begins, when later than asked.
    private func schedule(_ request: HostCommand.ScheduleRequest, by app: HostedApp) throws(HostError) -> Double? {
        guard let scheduled = change(app, { $0.schedule(request) }) else { return nil }
        switch scheduled {
        case .success(let later):
            saveRecord(of: app)
            return later?.secondsValue
        case .failure(let refused): throw HostError(.notPermitted, "app \(app.id): \(refused.message)")
        }
    }

    private func launch(_ request: HostCommand.LaunchRequest, by caller: UnixSocket.Peer) async throws(HostError) -> HostReply {
        if let existing = apps[request.app], let pid = existing.pid {
            throw HostError(.launchFailed, "app \(request.app) is running already (pid \(pid)): terminate it first")
        }
        let user = try AppUser.forLaunch(
            named: request.user, by: caller, host: .current, settings: settings, freezer: freezer.kind
        )
        let spec = LaunchSpec(
            command: request.command, modes: request.modes, output: request.output, user: user, environment: request.environment
        )
        let app = try await start(request.app, spec, reason: nil, inBackground: request.inBackground)
        var reply = HostReply(id: nil)
        reply.pid = app.pid
        reply.state = app.status(value(of: app)).state
        return reply
    }

    /// Starts an app in a new group and model, taking over what its previous launch left: its
    /// conditions, its scheduled work and the notices waiting for it.
    ///
    /// - Parameters:
    ///   - reason: why the host launched it (`KEEPALIVE_LAUNCH_REASON`); `nil` for a user's launch.
    ///   - inBackground: it enters the background once it has said hello and handled it.
    func start(
        _ id: String,
        _ spec: LaunchSpec,
        reason: String?,
        inBackground: Bool
    ) async throws(HostError) -> HostedApp {
        let group: AppProcessGroup
        do {
            group = try freezer.makeGroup(for: id)
        } catch {
            decide(.launchEnded(id, started: false))  // its machine hears of it, as of a failed spawn
            throw error
        }
        let (app, model) = HostedApp.make(
            id, spec, group: group, configuration: configuration, profile: settings.profile, logger: logger,
            scheduledWork: scheduledHandler(for: id)
        )
        let previous = apps.updateValue(app, forKey: id)
        membership.add(app.group)
        app.monitor = previous?.monitor
        let (dataWakes, eventWakes) = (settings.dataWakes, settings.eventWakes)
        decide(.launching(id, model, reason: reason, inBackground: inBackground, dataWakes: dataWakes, eventWakes: eventWakes))
        do {
            try await app.start(spec, reason: reason, hostSocket: configuration.appSocketPath, processes: processes, exits: exits) {
                [input = loopInput] in input?.yield(.exited)
            }
        } catch {
            apps[id] = previous
            decide(.launchEnded(id, started: false))
            try? app.group.remove()
            throw error
        }
        restoreConditions(of: app)
        decide(.launchEnded(id, started: true, exitTold: app.exitWatch != nil))
        saveRecord(of: app)
        let changes = app.authorization.changes()
        app.watcher = tasks.addCancellable { [weak self] in
            for await snapshot in changes { await self?.authorizationChanged(id, to: snapshot.status) }
        }
        if inBackground {
            // Like a launch for background work: the app enters the background once it has said
            // hello and handled it (an app that never says hello, after the notice timeout).
            spawn { [timeout = settings.noticeTimeout * 4] in
                guard (try? await self.clock.sleep(for: timeout)) != nil else { return }  // the host is stopping
                self.tell(id, .noHello)
            }
        }
        emit(.launched(app: id, pid: app.pid ?? 0))
        return app
    }

    private func authorizationChanged(_ id: String, to status: LocationAuthorization) {
        guard let app = apps[id] else { return }
        change(app) { $0.model.authorization = status }
    }

    /// The compositor's "background": the app hears it and begins its tasks before the model
    /// counts (as an iOS app's didEnterBackground handler runs before it can be suspended).
    private func moveToBackground(_ app: HostedApp) async {
        guard state(of: app).isInForeground else { return }
        // The budget starts here, before the app's own copy of it: its expiration never comes first.
        change(app) { [timeout = settings.noticeTimeout] in $0.model.enterBackground(awaitingHandlerFor: timeout) }
        backgroundHandlerEnded(for: app, answered: await ask(app, .lifecycle(.background)))
    }

    /// The background's handshake (the compositor's move, a launch in the background): the
    /// model entered it awaiting the app's handler of the notice until the app answered it
    /// (`nil`: not connected, nobody to ask) or its time ran out.
    func backgroundHandlerEnded(for app: HostedApp, answered: Bool?) {
        if answered == false { emit(.refused("\(app.id) did not answer entering the background within the notice timeout")) }
        change(app) { $0.model.backgroundHandlerFinished() }
    }

    func connectionClosed(_ connection: ControlConnection) {
        for app in apps.values where app.connection === connection {
            app.connection = nil
            app.forgetWakeSockets()
            app.acknowledge(nil)
            change(app) { $0.disconnected() }
        }
    }
}
