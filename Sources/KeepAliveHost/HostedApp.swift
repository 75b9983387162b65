import FoundationEssentials
import Glibc
import KeepAliveCore
import KeepAliveHostProtocol
import KeepAliveMonitoring

/// One app under the host, as the host's hands hold it: its process group, its first process,
/// its connection, the watches of its group and sockets, its files. Confined to the ``AppHost``
/// actor. What decides anything of it (its model, its machine, what it reported) is one value
/// of the host's machine (``HostMachine/App``).
final class HostedApp {
    let id: String
    let group: AppProcessGroup
    let authorization: LocationAuthorizationManager
    /// Who its processes run as.
    let user: AppUser
    var pid: Int32?
    /// Its processes found outside its group (it was killed for them): found by the host's
    /// checks (at each freeze, and of a suspended app at each `status`).
    var escapes: [AppProcessGroup.Escape] = []
    /// While frozen (cgroup v2): the kernel's word that the group changed.
    var groupEvents: CgroupEvents?
    /// The host's copies of the app's sockets whose data wakes it while frozen (`wake-on-data`).
    var wakeSockets: [Int32] = []
    /// Watches ``wakeSockets`` while the app is frozen.
    var socketWake: SocketWake?
    /// The app's own connection, after `hello`: where notices go.
    var connection: ControlConnection?
    /// Waits for the app's answer to a notice, by notice (`will-suspend`, `background`).
    var waiters: [String: CheckedContinuation<Void, Never>] = [:]
    /// Notices answered since they were last sent.
    var answered: Set<String> = []
    var since = Date()
    var reason: String?
    /// Its authorization's changes, followed while it runs (a job of the host's run).
    var watcher: OwnedTasks.Handle?
    /// The kernel's word that its first process ended (`nil`: looked for every housekeeping interval).
    var exitWatch: ProcessExitWatch?
    /// Found running when the host started (left by one that died): not its child.
    let isAdopted: Bool
    /// How it was launched, to launch it again for an event or a due task (`nil`: adopted).
    var launchSpec: LaunchSpec?
    /// The conditions the host watches for it, kept across its launches.
    var monitor: LocationMonitor?

    init(
        id: String,
        group: AppProcessGroup,
        authorization: LocationAuthorizationManager,
        user: AppUser,
        isAdopted: Bool = false
    ) {
        self.id = id
        self.group = group
        self.authorization = authorization
        self.user = user
        self.isAdopted = isAdopted
    }

    /// Ends a wait for the app's answer to `notice` (it answered, or time ran out); `nil` ends every wait.
    func acknowledge(_ notice: String?) {
        if let notice {
            waiters.removeValue(forKey: notice)?.resume()
        } else {
            for waiter in waiters.values { waiter.resume() }
            waiters.removeAll()
        }
    }

    /// As `status` shows it, from its value in the host's machine (`nil`: none, as while a
    /// launch fails).
    func status(_ value: HostMachine.App?) -> HostAppStatus {
        let model = value?.model ?? Application()
        let machine = value?.machine
        return HostAppStatus(
            app: id,
            state: model.state == .notRunning ? "not running" : model.state.rawValue,
            frozen: model.state != .notRunning && group.isFrozen && escapes.isEmpty,
            since: since.formatted(.iso8601),
            alive: value.map(Self.aliveBecause) ?? [],
            reason: reason,
            pid: pid,
            authorization: model.authorization.rawValue,
            cpu: group.cpuTime().secondsValue,
            user: user.name,
            escaped: escapes.isEmpty ? nil : escapes.map(\.description),
            conditions: monitor.map { $0.identifiers.count },
            wakes: machine.map {
                "data \($0.dataWakes.remaining(at: model.now)) of \($0.dataWakes.burst), "
                    + "events \($0.eventWakes.remaining(at: model.now)) of \($0.eventWakes.burst)"
            },
            waiting: machine.flatMap { machine in
                machine.waitingWakes.isEmpty ? nil : WakeCause.allCases.filter(machine.waitingWakes.contains).map { cause in
                    "\(cause.rawValue): at the next wake its budget allows, in \((machine.nextWake(for: cause, from: model.now) - model.now).secondsText)"
                }
            }
        )
    }

    /// Why the app runs now, each in words.
    static func aliveBecause(_ value: HostMachine.App) -> [String] {
        let app = value.model
        guard app.state == .background else { return app.state.isRunning ? ["foreground"] : [] }
        var reasons: [String] = []
        for (number, identifier) in value.tasks.sorted(by: { $0.key < $1.key }) {
            guard let task = app.tasks[identifier] else { continue }
            let left = app.backgroundTimeRemaining.map { ", \($0.secondsText) left" } ?? ""
            reasons.append("background task '\(task.name)' (#\(number)\(left))")
        }
        if let task = app.runningScheduledTask {
            reasons.append("scheduled \(task.kind.rawValue) task '\(task.identifier)'")
        }
        if app.audioPlaybackCount > 0, app.backgroundModes.contains(.audio) {
            reasons.append(value.observesAudio ? "audio (observed on ALSA)" : "audio (reported)")
        }
        if app.locationKeepsAlive() { reasons.append("location with always (reported request)") }
        if app.now < app.audioGraceUntil {
            reasons.append("grace after audio, \((app.audioGraceUntil - app.now).secondsText) left")
        }
        if app.now < app.locationGraceUntil {
            reasons.append("grace after location, \((app.locationGraceUntil - app.now).secondsText) left")
        }
        if app.now < app.eventGraceUntil {
            reasons.append("woken for a location event, \((app.eventGraceUntil - app.now).secondsText) left")
        }
        if app.now < app.entryGraceUntil {
            reasons.append("grace after entering the background, \((app.entryGraceUntil - app.now).secondsText) left")
        }
        if !app.profile.suspends { reasons.append("the \(app.profile.name) policy never suspends") }
        return reasons
    }
}


/// What the host needs to launch an app again: its command, modes, output, user and variables.
struct LaunchSpec {
    var command: [String]
    var modes: BackgroundModes
    var output: String?
    var user: AppUser
    /// Added to the allow-list of the host's environment (`launch --env`).
    var environment: [String: String] = [:]
}

extension HostedApp {
    /// What its model did, for `status`: since when, and why, it is in its state.
    func changed(_ event: AppEvent) {
        switch event {
        case .didEnterBackground, .didBecomeActive: reason = nil
        case .suspended(let cause): reason = cause.description
        case .terminated(let reason): self.reason = "killed: \(reason)"
        default: return
        }
        since = Date()
    }

    /// Frozen: watches the kernel's word that its group changed (cgroup v2) and data on the
    /// sockets it named, each calling back once, on a queue of its own.
    func watchWhileFrozen(onData: @escaping @Sendable () -> Void, onGroupChange: @escaping @Sendable () -> Void) {
        if !wakeSockets.isEmpty { socketWake = SocketWake(descriptors: wakeSockets, onData: onData) }
        if let folder = group.freezing.eventsFolder { groupEvents = CgroupEvents(folder: folder, onChange: onGroupChange) }
    }

    /// Stops watching its group and its sockets.
    func stopWatching() {
        stopWatchingGroup()
        stopWatchingSockets()
    }

    /// Stops watching its group (the kernel's word that it changed).
    func stopWatchingGroup() {
        groupEvents?.stop()
        groupEvents = nil
    }

    /// Stops watching its sockets (data came); the host keeps its copies.
    func stopWatchingSockets() {
        socketWake?.stop()
        socketWake = nil
    }
}

extension HostedApp {
    /// Its first process exited: the watches of its exit, its group and its authorization end.
    func exited() {
        pid = nil
        exitWatch?.cancel()
        exitWatch = nil
        stopWatchingGroup()
        watcher?.cancel()
    }

    /// The start of its end: the watch of its group stopped, the app told (`terminate`, if it
    /// is connected).
    func tellToEnd() {
        stopWatchingGroup()
        connection?.send(.terminate)
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
