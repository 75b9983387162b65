import CProcessControl
import Glibc
import KeepAliveCore

/// The host's push: an app names sockets of its own (`wake-on-data`), the host keeps copies
/// (pidfd_getfd), and while the app is frozen the first data on one wakes it for the event
/// budget, as a location event does. The app reads the data itself once thawed.
extension AppHost {
    func wakeOnData(_ request: HostRequest, by app: HostedApp, from connection: ControlConnection) throws(HostError) -> HostReply {
        let sockets = request.sockets ?? []
        guard sockets.count <= HostProtocol.maximumWakeSockets else {
            throw HostError(.badRequest, "wake-on-data takes at most \(HostProtocol.maximumWakeSockets) sockets, not \(sockets.count)")
        }
        var copies: [Int32] = []
        for socket in sockets {
            let copy = socket >= 0 ? cprocess_take_descriptor(connection.pid, socket) : -1
            guard copy >= 0 else {
                let reason = socket < 0 ? "not a descriptor" : String(cString: strerror(errno))
                for taken in copies { close(taken) }
                throw HostError(.badRequest, "wake-on-data: cannot take descriptor \(socket) of process \(connection.pid) (\(reason); pidfd_getfd needs Linux 5.6)")
            }
            var status = stat()
            guard fstat(copy, &status) == 0, status.st_mode & S_IFMT == S_IFSOCK else {
                close(copy)
                for taken in copies { close(taken) }
                throw HostError(.badRequest, "wake-on-data: descriptor \(socket) is not a socket")
            }
            copies.append(copy)
        }
        app.forgetWakeSockets()
        app.wakeSockets = copies
        return HostReply(id: nil)
    }

    /// Data came on one of a frozen app's sockets: woken for the event budget, unless it was
    /// thawed or frozen again since.
    func dataArrived(for id: String, generation: Int) {
        guard let app = apps[id], app.generation == generation, app.model.state == .suspended else { return }
        app.socketWake?.stop()
        app.socketWake = nil
        app.model.advance(to: elapsed)
        guard app.mayWake(for: .data, at: elapsed) else { return putOff(.data, of: app) }
        wakeForData(app)
    }

    /// Wakes a suspended app for the event budget, counted against its pushes.
    private func wakeForData(_ app: HostedApp) {
        app.spendWake(for: .data, at: elapsed)
        app.model.wakeForLocationEvent()
        emit(.wokenForData(app: app.id))
    }

    /// A wake the app's budget does not allow now: done at the next one it does.
    func putOff(_ cause: WakeCause, of app: HostedApp) {
        guard app.waitingWakes.insert(cause).inserted else { return }
        emit(.wakePutOff(app: app.id, cause: cause.rawValue, after: app.nextWake(for: cause, from: elapsed) - elapsed))
        poke()
    }

    /// When the wakes put off fall due: the run loop wakes then.
    func waitingWakeTimes() -> [Duration] {
        apps.values.flatMap { app in
            app.waitingWakes.map { app.nextWake(for: $0, from: elapsed) }
        }
    }

    /// Does the wakes put off that the budgets now allow (or that need no wake any more).
    func serveWaitingWakes() {
        let now = elapsed
        for app in apps.values where !app.waitingWakes.isEmpty {
            if app.waitingWakes.contains(.data) {
                if app.model.state != .suspended || app.pid == nil {
                    app.waitingWakes.remove(.data)  // it runs, and reads its data itself
                } else if app.mayWake(for: .data, at: now) {
                    app.waitingWakes.remove(.data)
                    wakeForData(app)
                }
            }
            guard app.waitingWakes.contains(.event) else { continue }
            if app.pid == nil {
                guard app.mayBeLaunched else {
                    app.waitingWakes.remove(.event)
                    continue
                }
                guard app.mayWake(for: .event, at: now) else { continue }
                app.waitingWakes.remove(.event)
                app.spendWake(for: .event, at: now)
                relaunch(app, reason: HostNotice.Kind.locationEvent.rawValue)
            } else if app.model.state == .suspended {
                guard app.mayWake(for: .event, at: now) else { continue }
                app.waitingWakes.remove(.event)
                app.spendWake(for: .event, at: now)
                app.model.wakeForLocationEvent()
                flushPending(app)
            } else {
                app.waitingWakes.remove(.event)
                flushPending(app)
            }
        }
    }
}

extension HostedApp {
    /// Stops watching the app's sockets and closes the host's copies.
    func forgetWakeSockets() {
        socketWake?.stop()
        socketWake = nil
        for socket in wakeSockets { close(socket) }
        wakeSockets = []
    }
}
