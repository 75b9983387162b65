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
        case .report(let report): return try self.report(report, by: try caller(connection))
        case .monitor(let named, let conditions, let assuming):
            return try await addConditions(conditions, assuming: assuming, naming: named, by: try caller(connection))
        case .unmonitor(let named, let identifiers):
            return try await removeConditions(identifiers, naming: named, by: try caller(connection))
        case .wakeOnData(let sockets): return try wakeOnData(sockets, by: try caller(connection), from: connection)
        case .launch(let launch):
            try requireOutsideEveryApp(connection)
            return try await self.launch(launch, by: connection.peer)
        case .move(let move, let named):
            try requireOutsideEveryApp(connection)
            let app = try self.named(named)
            try requireOwner(of: app, connection)
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
            let shown = if let named { [try self.named(named)] } else { Array(apps.values) }
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
        let app = try named(name)
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
            let expiring: () -> Void = { [weak self, id = app.id] in self?.assumeIsolated { $0.expiring(id, task: number) } }
            let begun = change(app) { value in
                let identifier = value.model.beginBackgroundTask(named: name, expirationHandler: expiring)
                if identifier != BackgroundTaskIdentifier.invalid { value.tasks[number] = identifier }
                return (identifier != BackgroundTaskIdentifier.invalid, value.model.backgroundTimeRemaining)
            }
            reply.granted = begun?.0
            reply.remaining = begun?.1?.secondsValue
        case .endTask(let number):
            change(app) { value in
                if let identifier = value.tasks.removeValue(forKey: number) { value.model.endBackgroundTask(identifier) }
            }
        case .audio(let active):
            let refused = change(app) { value in
                value.reportsAudio = active
                value.followAudio()
                return active && value.model.state == .background && !value.model.backgroundModes.contains(.audio)
            }
            if refused == true {
                throw HostError(.notPermitted, "app \(app.id) has no audio background mode: launch it with --modes audio")
            }
        case .location(let active):
            if let refused = change(app, { $0.reportLocation(active) }) ?? nil {
                throw HostError(.notPermitted, "app \(app.id): \(refused.message)")
            }
        case .schedule(let request): reply.begins = try schedule(request, by: app)
        case .complete(let name, let success):
            let completed = change(app) { value in
                guard let running = value.model.runningScheduledTask, running.identifier == name else { return false }
                running.setTaskCompleted(success: success)
                return true
            }
            guard completed == true else {
                throw HostError(.badRequest, "no scheduled task \(name ?? "(no name)") is running for \(app.id)")
            }
        case .ack(let notice):
            app.answered.insert(notice)
            app.acknowledge(notice)
        }
        return reply
    }

    /// `schedule`: scheduled work, begun no sooner than the app's wake budget allows.
    ///
    /// - Returns: in how many seconds it begins, when later than asked.
    private func schedule(_ request: HostCommand.ScheduleRequest, by app: HostedApp) throws(HostError) -> Double? {
        guard let now = value(of: app)?.model.now else { return nil }
        let asked = now + (request.earliest.map { Duration.milliseconds(Int64(max(0, $0) * 1000)) } ?? .zero)
        let begin = appMachine(app)?.nextWake(for: .event, from: asked) ?? asked
        handle(.scheduled(askedFor: asked), for: app)
        let submitted = BackgroundTaskRequest(
            identifier: request.name,
            kind: request.kind,
            earliestBeginDate: request.earliest == nil && begin == asked ? nil : begin,
            requiresExternalPower: request.power,
            requiresNetworkConnectivity: request.network
        )
        let refused = change(app) { value -> BackgroundError? in
            do throws(BackgroundError) {
                try value.model.submit(submitted)
                return nil
            } catch {
                return error
            }
        }
        if let refused = refused ?? nil { throw HostError(.notPermitted, "app \(app.id): \(refused.message)") }
        saveRecord(of: app)
        return begin > asked ? (begin - now).secondsValue : nil
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
        let (app, model): (HostedApp, Application)
        do {
            (app, model) = try makeApp(id, spec)
        } catch {
            decide(.launchEnded(id, started: false))  // its machine hears of it, as of a failed spawn
            throw error
        }
        let previous = apps.updateValue(app, forKey: id)
        membership.add(app.group)
        app.monitor = previous?.monitor
        let (dataWakes, eventWakes) = (settings.dataWakes, settings.eventWakes)
        decide(.launching(id, model, reason: reason, inBackground: inBackground, dataWakes: dataWakes, eventWakes: eventWakes))
        do {
            try await spawn(app, spec, reason: reason)
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
                self.enterBackgroundIfNoHello(id)
            }
        }
        emit(.launched(app: id, pid: app.pid ?? 0))
        return app
    }

    /// A new launch of app `id`: its group, its authorization, its model on the host's rules (the
    /// graces stretched by the report allowance), its scheduled work served.
    private func makeApp(_ id: String, _ spec: LaunchSpec) throws(HostError) -> (HostedApp, Application) {
        let group = try freezer.makeGroup(for: id)
        let authorization = LocationAuthorizationManager(application: id, file: configuration.authorizationFile(id), logger: logger)
        var profile = settings.profile
        profile.audioGrace += configuration.reportAllowance
        profile.locationGrace += configuration.reportAllowance
        let model = Application(profile: profile, backgroundModes: spec.modes, authorization: authorization.status, logger: logger)
        model.conditions = configuration.conditions()
        model.defaultScheduledHandler = scheduledHandler(for: id)
        let app = HostedApp(id: id, group: group, authorization: authorization, user: spec.user)
        app.launchSpec = spec
        return (app, model)
    }

    /// Starts the app's first process in its group, as its user, and waits until it is in it;
    /// one that did not get there is killed and reaped.
    private func spawn(_ app: HostedApp, _ spec: LaunchSpec, reason: String?) async throws(HostError) {
        var environment = spec.environment
        environment["KEEPALIVE_HOST_SOCKET"] = configuration.appSocketPath
        environment["KEEPALIVE_APP"] = app.id
        environment["KEEPALIVE_LAUNCH_REASON"] = reason
        do {
            let group = app.group
            let pid = try await processes.awaiting { [environment] () throws(HostError) -> Int32 in
                try group.launch(spec.command, as: spec.user, environment: environment, output: spec.output)
            }
            app.pid = pid
            app.exitWatch = ProcessExitWatch(pid: pid, queue: exits) { [input = loopInput] in input?.yield(.exited) }
            try await waitUntilInGroup(app, pid: pid)
            try app.group.delegate(to: spec.user)
        } catch {
            if let pid = app.pid {  // started, but not as it must run: it does not run at all
                await stopEverything(of: app, with: SIGKILL)
                _ = await processes.awaiting { ExitStatus.reap(pid, waiting: true) }
            }
            throw error
        }
    }

    /// Waits until the app's first process has joined its cgroup (the launcher's shell does it
    /// first thing, then becomes the app), so that from the launch's reply on the app is in its
    /// group: where it goes after that is its own doing, and checked at each freeze.
    private func waitUntilInGroup(_ app: HostedApp, pid: Int32) async throws(HostError) {
        guard app.group.path != nil else { return }  // signals: the session is made by the spawn itself
        var ended: ExitStatus?
        let joined = await KernelWait.until(.now + .seconds(10), events: app.group.freezing.eventsFolder) {
            if app.group.contains(pid) || AppLauncher.hasJoined(pid) { return true }
            ended = ExitStatus.reap(pid)
            return ended != nil
        }
        if let ended {
            app.pid = nil
            throw HostError(.launchFailed, "app \(app.id) ended before it joined its group (\(ended))")
        }
        guard joined else {
            kill(pid, SIGKILL)
            throw HostError(.launchFailed, "app \(app.id) did not join its group \(app.group.path ?? "") within 10 s")
        }
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

    private func enterBackgroundIfNoHello(_ id: String) {
        guard let app = apps[id] else { return }
        handle(.noHello, for: app)
    }

    func connectionClosed(_ connection: ControlConnection) {
        for app in apps.values where app.connection === connection {
            app.connection = nil
            app.forgetWakeSockets()
            app.acknowledge(nil)
            change(app) { $0.disconnected() }
        }
    }

    /// The app whose process sent this (after its `hello`).
    private func caller(_ connection: ControlConnection) throws(HostError) -> HostedApp {
        guard let app = apps.values.first(where: { $0.connection === connection }) else {
            throw HostError(.badRequest, "say hello with your app id first")
        }
        return app
    }

    private func named(_ name: String?) throws(HostError) -> HostedApp {
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

    /// Moving or stopping an app: root, the host's user, or the user the app runs as.
    private func requireOwner(of app: HostedApp, _ connection: ControlConnection) throws(HostError) {
        let uid = connection.peer.uid
        guard uid == 0 || uid == UInt32(geteuid()) || uid == app.user.uid else {
            throw HostError(
                .notPermitted,
                "app \(app.id) runs as \(app.user.name): only that user, the host's user or root may move or stop it"
            )
        }
    }

    /// Lifecycle commands and launches come from outside every app.
    private func requireOutsideEveryApp(_ connection: ControlConnection) throws(HostError) {
        if let app = apps.values.first(where: { $0.pid != nil && $0.group.contains(connection.pid) }) {
            throw HostError(
                .notPermitted,
                "process \(connection.pid) belongs to app \(app.id): an app may not move apps"
            )
        }
    }
}
