import FoundationEssentials
import Glibc

/// What the model decides, done to the app's processes: suspended is frozen, resumed is
/// thawed, killed is SIGKILL, with the notices an app needs to freeze safely.
extension AppHost {
    func observe(_ app: HostedApp) {
        // The model runs only inside this actor's methods, so its callbacks do too.
        let id = app.id
        app.model.addObserver { [weak self] event in
            self?.assumeIsolated { $0.modelDidChange(id, event) }
        }
    }

    private func modelDidChange(_ id: String, _ event: AppEvent) {
        guard let app = apps[id] else { return }
        emit(.lifecycle(app: app.id, event))
        switch event {
        case .didEnterBackground:
            app.since = Date()
            app.reason = nil
        case .didBecomeActive:
            app.since = Date()
            app.reason = nil
        case .willEnterForeground:
            app.connection?.send(HostNotice(.lifecycle, event: "foreground"))
        case .suspended(let cause):
            app.since = Date()
            app.reason = cause.description
            app.generation += 1
            let generation = app.generation
            Task { await self.freeze(app, generation: generation) }
        case .resumed:
            app.generation += 1
            app.acknowledge(HostNotice.Kind.willSuspend.rawValue)
            Task { await self.thaw(app) }
        case .willTerminate:
            app.generation += 1
            let pid = app.pid
            Task { await self.stop(app, pid: pid) }
        case .terminated(let reason):
            app.since = Date()
            app.generation += 1
            app.reason = "killed: \(reason)"
            emit(.killed(app: app.id, reason: reason.description))
            app.group.signalAll(SIGKILL)
        default:
            break
        }
    }

    /// Scheduled work of the app's, run by the model: the app is told to do it (after the
    /// thaw the model's resume started), and told when its time is nearly up.
    func serveScheduledTasks(_ app: HostedApp) {
        let id = app.id
        app.model.conditions = configuration.conditions()
        app.model.defaultScheduledHandler = { [weak self] task in
            let name = task.identifier
            self?.assumeIsolated { $0.apps[id]?.connection?.send(HostNotice(.runTask, name: name)) }
            task.expirationHandler = { [weak self] in
                self?.assumeIsolated { $0.apps[id]?.connection?.send(HostNotice(.expiring, name: name)) }
            }
        }
    }

    /// A host-side background task is about to run out: the app should end it.
    func expiring(_ id: String, task number: Int) {
        apps[id]?.connection?.send(HostNotice(.expiring, task: number))
    }

    /// Tells the app, waits a bounded time for its answer, then freezes it, unless a newer
    /// decision came meanwhile.
    private func freeze(_ app: HostedApp, generation: Int) async {
        let timeout = configuration.noticeTimeout
        let answered = await ask(app, HostNotice(.willSuspend, deadline: timeout.secondsValue))
        guard app.generation == generation, app.model.state == .suspended else { return }
        do {
            let latency = try await app.group.freeze()
            recordStopped()
            emit(.frozen(app: app.id, latency: latency, answered: answered))
            if app.generation != generation { await thaw(app) }  // resumed while freezing
        } catch {
            emit(.error("cannot freeze \(app.id): \(error.message)"))
        }
    }

    /// Sends a notice and waits, at most the notice timeout, for the app's `ack` of it.
    ///
    /// - Returns: whether it answered (`nil`: not connected, nobody to ask).
    func ask(_ app: HostedApp, _ notice: HostNotice) async -> Bool? {
        guard let connection = app.connection else { return nil }
        let kind = notice.notice == .lifecycle ? (notice.event ?? "lifecycle") : notice.notice.rawValue
        app.answered.remove(kind)
        connection.send(notice)
        return await waitForAnswer(app, kind: kind)
    }

    /// Waits, at most the notice timeout, for the app's `ack` of `kind` (it may have come already).
    func waitForAnswer(_ app: HostedApp, kind: String) async -> Bool {
        let id = app.id
        let timer = Task { [clock, timeout = configuration.noticeTimeout] in
            try? await clock.sleep(for: timeout)
            self.noticeTimedOut(id, kind)
        }
        await withCheckedContinuation { continuation in
            if app.answered.contains(kind) { return continuation.resume() }
            app.waiters[kind]?.resume()
            app.waiters[kind] = continuation
        }
        timer.cancel()
        return app.answered.contains(kind)
    }

    private func noticeTimedOut(_ id: String, _ kind: String) {
        apps[id]?.acknowledge(kind)
    }

    private func thaw(_ app: HostedApp) async {
        guard app.group.isFrozen else { return }
        do {
            let latency = try await app.group.thaw()
            recordStopped()
            emit(.thawed(app: app.id, latency: latency))
            app.connection?.send(HostNotice(.didResume))
        } catch {
            emit(.error("cannot thaw \(app.id): \(error.message)"))
        }
    }

    /// A requested termination: thawed, told, SIGTERM, and SIGKILL after the grace.
    private func stop(_ app: HostedApp, pid: Int32?) async {
        app.group.thawNow()
        app.connection?.send(HostNotice(.terminate))
        app.group.signalAll(SIGTERM)
        try? await clock.sleep(for: configuration.terminationGrace)
        if app.pid == pid, pid != nil { app.group.signalAll(SIGKILL) }
    }
}
