import FoundationEssentials
import Glibc
import KeepAliveCore
import KeepAliveHostProtocol

/// What the model decides, done to the app's processes: suspended is frozen, resumed is
/// thawed, killed is SIGKILL, with the notices an app needs to freeze safely.
extension AppHost {
    /// What the app's model did, said (its machine decided it already).
    func modelDidChange(_ app: HostedApp, _ event: AppEvent) {
        emit(.lifecycle(app: app.id, event))
        app.changed(event)
        if case .terminated(let reason) = event { emit(.killed(app: app.id, reason: reason.description)) }
    }

    /// Tells the app's machine, through the host's, what happened, and does what they decide.
    /// An app a newer launch replaced hears nothing more: its process is gone, its machine is
    /// the new launch's.
    func handle(_ event: HostedAppMachine.Event, for app: HostedApp) {
        guard apps[app.id] === app else { return }
        decide(.app(app.id, event))
    }

    /// Tells app `id`'s machine, if the host still has the app, what happened (the kernel's
    /// word, a timer of the host's).
    func tell(_ id: String, _ event: HostedAppMachine.Event) {
        guard let app = apps[id] else { return }
        handle(event, for: app)
    }

    /// The app's model's state now (`notRunning`: none).
    func state(of app: HostedApp) -> AppState { machine.apps[app.id]?.model.state ?? .notRunning }


    /// Does one of the machine's actions: the host's only hands on the app.
    func perform(_ action: HostedAppMachine.Action, for app: HostedApp) {
        switch action {
        case .askBeforeFreezing(let generation):
            spawn {
                let answered = await self.ask(app, .willSuspend(deadline: self.settings.noticeTimeout.secondsValue))
                self.handle(.noticeSettled(generation: generation, answered: answered), for: app)
            }
        case .freeze(let generation, let answered): spawn { await self.freeze(app, generation: generation, answered: answered) }
        case .thaw(let generation): spawn { await self.thaw(app, generation: generation) }
        case .thawUnreported: app.group.thawNow()
        case .watchWhileFrozen(let generation):
            // Off the host's executor, each a job of its run: the kernel's word, data on a socket.
            let id = app.id
            app.watchWhileFrozen(
                onData: { [weak self] in self?.tasks.add { [weak self] in await self?.tell(id, .dataArrived(generation: generation)) } },
                onGroupChange: { [weak self] in self?.tasks.add { [weak self] in await self?.tell(id, .groupChanged(generation: generation)) } }
            )
        case .enforceFreeze(let generation): spawn { await self.enforceFreeze(app, generation: generation) }
        case .stopWatching: app.stopWatching()
        case .stopWatchingSockets: app.stopWatchingSockets()
        case .endWait(let kind): app.acknowledge(kind.rawValue)
        case .send(let notices): for notice in notices { app.connection?.send(notice) }
        case .enterBackground(let awaitingHandler, _):
            // The model entered it (the host's machine did); the handler's end is awaited here.
            guard awaitingHandler else { return }
            spawn { self.backgroundHandlerEnded(for: app, answered: await self.waitForAnswer(app, kind: "background")) }
        case .wakeForEvent, .killModel: break  // the model's: done by the host's machine
        case .launch(let reason): relaunch(app, reason: reason)
        case .stopToLaunchAgain:
            // Adopted from a host that died and not connected to this one: stopped, to be
            // launched again for its location event once its group is gone.
            app.reason = "adopted and not connected to this host: launched again for its location event"
            fallthrough
        case .terminate:
            let pid = app.pid
            spawn { await self.stop(app, pid: pid) }
        case .kill:
            app.forgetWakeSockets()
            spawn { await self.stopEverything(of: app, with: SIGKILL) }
        case .killEscapes: spawn { await app.group.killEscapes(on: self.processes) }
        case .reportWokenForData: emit(.wokenForData(app: app.id))
        case .reportPutOff(let cause, let after):
            emit(.wakePutOff(app: app.id, cause: cause.rawValue, after: after))
        case .reportDelivery(let delivery, let notice):
            if case .locationEvent(let event, _) = notice { emit(.locationEvent(app: app.id, event, delivery)) }
        }
    }

    /// Scheduled work of the app's, run by the model: the app is told to do it (after the
    /// thaw the model's resume started), and told when its time is nearly up.
    func serveScheduledTasks(_ app: HostedApp) {
        let (conditions, handler) = (configuration.conditions(), scheduledHandler(for: app.id))
        change(app) { value in
            value.model.conditions = conditions
            value.model.defaultScheduledHandler = handler
        }
    }

    /// What an app's model does with its scheduled work: tell the app (``serveScheduledTasks(_:)``).
    func scheduledHandler(for id: String) -> (ScheduledBackgroundTask) -> Void {
        { [weak self] task in
            let name = task.identifier
            self?.assumeIsolated { $0.apps[id]?.connection?.send(.runTask(name)) }
            task.expirationHandler = { [weak self] in
                self?.assumeIsolated { $0.apps[id]?.connection?.send(.workExpiring(name)) }
            }
        }
    }

    /// Freezes the app's group, and reports it once the kernel says so with every process inside.
    private func freeze(_ app: HostedApp, generation: Int, answered: Bool?) async {
        do {
            let latency = try await app.group.freeze()
            recordStopped()
            // Reported only once seen: every process of the app in the group, the kernel saying frozen.
            if state(of: app) != .notRunning {
                guard await checkContainment(app) else { return }
            }
            // Killed meanwhile (a `status` found it escaped): no freeze to report; its machine
            // undoes the freeze.
            if state(of: app) != .notRunning {
                guard app.group.isFrozen else {
                    emit(.error("\(app.id) was asked to freeze, but the kernel does not say it is frozen"))
                    return
                }
                emit(.frozen(app: app.id, latency: latency, answered: answered))
            }
            handle(.froze(generation: generation), for: app)
        } catch {
            emit(.error("cannot freeze \(app.id): \(error.message)"))
        }
    }

    /// Sends a notice and waits, at most the notice timeout, for the app's `ack` of it.
    ///
    /// - Returns: whether it answered (`nil`: not connected, nobody to ask).
    func ask(_ app: HostedApp, _ notice: HostNotice) async -> Bool? {
        guard let connection = app.connection else { return nil }
        let kind = notice.answer
        app.answered.remove(kind)
        connection.send(notice)
        return await waitForAnswer(app, kind: kind)
    }

    /// Waits, at most the notice timeout, for the app's `ack` of `kind` (it may have come already).
    func waitForAnswer(_ app: HostedApp, kind: String) async -> Bool {
        let id = app.id
        await withDiscardingTaskGroup { group in
            group.addTask { [clock, timeout = settings.noticeTimeout] in
                // Cancelled once answered: then it ends no wait (a later one for the same notice).
                guard (try? await clock.sleep(for: timeout)) != nil else { return }
                await self.timedOut(id, kind)
            }
            await withCheckedContinuation { continuation in
                if app.answered.contains(kind) { return continuation.resume() }
                app.waiters[kind]?.resume()
                app.waiters[kind] = continuation
            }
            group.cancelAll()
        }
        return app.answered.contains(kind)
    }

    private func timedOut(_ id: String, _ kind: String) { apps[id]?.acknowledge(kind) }

    private func thaw(_ app: HostedApp, generation: Int) async {
        guard app.group.isFreezeRequested else { return handle(.thawed(generation: generation, wasFrozen: false), for: app) }
        do {
            let latency = try await app.group.thaw()
            recordStopped()
            emit(.thawed(app: app.id, latency: latency))
            handle(.thawed(generation: generation, wasFrozen: true), for: app)
        } catch {
            emit(.error("cannot thaw \(app.id): \(error.message)"))
            handle(.thawed(generation: generation, wasFrozen: false), for: app)  // a freeze waiting for it goes on
        }
    }

    /// A termination (its model's, or to launch it again): ``terminate(_:)``, and SIGKILL after
    /// the grace if the same process still runs.
    private func stop(_ app: HostedApp, pid: Int32?) async {
        await terminate(app)
        // Cancelled: the host is stopping its apps itself.
        guard (try? await clock.sleep(for: configuration.terminationGrace)) != nil else { return }
        if apps[app.id] === app, app.pid == pid, pid != nil { await stopEverything(of: app, with: SIGKILL) }
    }

    /// The one way the host ends an app: the app told (`terminate`, if it is connected), SIGTERM
    /// to every process of it, its group thawed (a frozen process cannot end). The host's
    /// own stop does it for every app at once, then waits for them all.
    func terminate(_ app: HostedApp) async {
        app.tellToEnd()
        // Signalled while still frozen, then thawed: a frozen process cannot fork a child the
        // signal misses, and takes it the moment it runs again (RELIABILITY.md, issue 85).
        await stopEverything(of: app, with: SIGTERM)
        app.group.thawNow()
    }

    /// Sends `signal` to every process of the app: its group, its first process (the host's
    /// child) and any of its processes that left the group.
    func stopEverything(of app: HostedApp, with signal: Int32) async {
        await app.group.signalEverything(leader: app.isAdopted ? nil : app.pid, signal, on: processes)
    }

    /// Whether every process of the app is in its group. One that left gets the app killed, as
    /// the system kills an app that breaks its rules: the escaped processes first (they run),
    /// then the group; `status` names each with where it went. The walk of `/proc` is done on the
    /// host's queue for processes; an app that stopped running meanwhile counts as contained
    /// (its own check, or its end, decided for it).
    @discardableResult
    func checkContainment(_ app: HostedApp) async -> Bool {
        guard state(of: app) != .notRunning else { return true }
        let escapes = await app.group.escapes(on: processes)
        guard !escapes.isEmpty, state(of: app) != .notRunning else { return true }
        app.escapes = escapes
        for escape in escapes { emit(.escaped(app: app.id, escape)) }
        handle(.escaped(escapes.map(\.description)), for: app)
        return false
    }

    /// Checks a frozen group the kernel says changed, for the decision `generation`: done only
    /// while that decision holds (the check is a task of its own, which may run after a thaw
    /// decided since, and must not undo it). Its freeze goes to the machine as any other, which
    /// undoes one that ended after a newer decision.
    private func enforceFreeze(_ app: HostedApp, generation: Int) async {
        guard apps[app.id] === app, machine.holdsFreeze(app.id, generation) else { return }
        guard await checkContainment(app) else { return }
        guard !app.group.isFrozen, !app.group.processes().isEmpty else { return }
        emit(.error("\(app.id) was thawed by something other than the host while suspended: frozen again"))
        guard (try? await app.group.freeze()) != nil else { return }
        handle(.froze(generation: generation), for: app)
    }
}
