public import FoundationEssentials
import Dispatch
import Glibc
public import Logging
public import KeepAliveCore
public import KeepAliveHostProtocol
public import KeepAliveMonitoring
public import KeepAliveSleep

/// The host: plays the operating system's part for apps on Linux, where nothing suspends a
/// background process. Each app runs in a group of its own (cgroup v2, the v1 freezer, or a
/// session stopped with signals); the host keeps the same ``Application`` model the
/// simulator runs for each, on the real clock, and freezes the app's processes when the
/// model suspends it, thaws them when it resumes, and kills them when it is killed.
///
/// Apps and the compositor speak to it on a Unix socket (``HostProtocol``).
public actor AppHost {
    /// How the host runs: its rules, freezer, socket and timings.
    public struct Configuration: Sendable {
        /// The rules every app runs under.
        public var profile: ExecutionProfile = .ios13
        /// The freezer to use, or `nil` for the first that works here.
        public var freezer: FreezerKind?
        /// The folder the host's cgroups live in: one per host.
        public var name = "keepalive.host"
        /// The control socket.
        public var socket: URL
        var socketPath: String { socket.path }
        /// The socket's permission bits: 0600, or 0660 for ``socketGroup``.
        public var socketMode: UInt32 = 0o600
        /// The group whose members may use the socket besides the host's user and root (the
        /// socket is given to it); `nil`: the host's own. A member launches apps as itself.
        public var socketGroup: String?
        /// Who an app runs as when a root caller names nobody (`--app-user`); `nil`: a root
        /// caller must name the user, or the launch is refused.
        public var defaultUser: String?
        /// Whether a root caller may run an app as root (`launch --user root`). Nothing keeps such
        /// an app in its group: the host finds one that left and kills it, but cannot prevent it.
        public var allowsRootApps = false
        /// Whether, with the signal freezer, apps may run as users other than the host's. Off by
        /// default: with signals an app leaves its session with `setsid` and runs on unfrozen.
        public var allowsSignalsForOtherUsers = false
        /// Where the host reads an app's authorization (the app cannot claim it).
        public var authorizationFile: @Sendable (String) -> AuthorizationFile = { .defaultFile(for: $0) }
        /// How long an app may take to answer the will-suspend notice before it is frozen anyway.
        public var noticeTimeout: Duration = .milliseconds(500)
        /// Added to the audio and location graces: what an app reports reaches the host a
        /// little late (a socket, a thread), so a tick that comes exactly at the end of the
        /// grace, as the hybrid driver's 10 s interval against a 10 s grace does, is not lost
        /// to that delay (without it, measured: frozen within minutes by a ms of jitter).
        public var reportAllowance: Duration = .milliseconds(100)
        /// How long a terminated app has between SIGTERM and SIGKILL.
        public var terminationGrace: Duration = .seconds(2)
        /// How often the host looks, while something needs looking at: ALSA while an app with
        /// the audio mode runs, the power supply and network while scheduled work waits on them,
        /// an adopted app's group. Otherwise it sleeps until the kernel (an exit, a frozen group
        /// changing), a socket, a fix or the models' next event wakes it.
        public var housekeepingInterval: Duration = .seconds(1)
        /// Where scheduled work's conditions come from (the kernel; a test's own files in tests).
        public var conditions: @Sendable () -> SystemConditions = { SystemConditionsProbe().read() }
        /// The receiver the host watches for its apps' conditions (gpsd at localhost by default).
        public var locationSource: @Sendable () -> any LocationSource = { GPSDSource() }
        /// Where each app's conditions are kept (`APP.json`), so that they outlive the app and
        /// the host; `nil` keeps them in memory.
        public var monitorFolder: URL? = Configuration.defaultMonitorFolder
        /// How the watch rests while the device is stationary; `nil` watches all the time (for a
        /// replay, which plays on whether watched or not).
        public var stationaryPause: StationaryPause? = StationaryPause()
        /// The most conditions one app may have: 1,000 (iOS allows 20 regions), so that one app
        /// cannot make every fix slow for the others.
        public var maximumConditionsPerApp = 1_000
        /// A command to start as the host's watchdog (see ``HostWatchdog``), or `nil` for none:
        /// `keepalive host` starts `keepalive host watchdog`.
        public var watchdog: [String]?
        /// What the host's sockets admit of each app and user.
        public var limits = ControlLimits()
        /// What each app's group may hold: groups inside it and processes.
        public var groupLimits = AppGroupLimits()
        /// How often each app may be woken by data on its sockets (pushes).
        public var dataWakes = WakeBudget.data
        /// How often each app may be woken or launched for location events and scheduled tasks.
        public var eventWakes = WakeBudget.events
        /// Follows the device's sleep through logind for all the apps (``DeviceSleepKeeper``):
        /// one lock while the model lets any of them run, the refresh wake at their scheduled
        /// work's begin date. `nil` (the default): not followed.
        public var deviceSleep: DeviceSleepKeeper.Configuration?

        /// The apps' socket, beside the control socket (`KEEPALIVE_HOST_SOCKET` in each app):
        /// mode 0666, so that apps of any user reach it; it serves `hello` and reports only.
        public var appSocket: URL { URL(fileURLWithPath: appSocketPath) }
        var appSocketPath: String { socketPath + ".apps" }

        /// Where processes stopped with signals are listed, for the watchdog and the next host.
        public var stoppedFile: URL { URL(fileURLWithPath: stoppedPath) }
        var stoppedPath: String { socketPath + ".stopped" }

        /// A configuration with the defaults and this socket.
        public init(socket: URL = Configuration.defaultSocket) {
            self.socket = socket
        }

        /// `/var/lib/location-keepalive/monitors` for root, else
        /// `$XDG_STATE_HOME/location-keepalive/monitors` (`~/.local/state` by default).
        public static var defaultMonitorFolder: URL {
            if getuid() == 0 { return URL(fileURLWithPath: "/var/lib/location-keepalive/monitors") }
            return BaseDirectory.state().appendingPathComponent("location-keepalive/monitors")
        }

        /// ``HostProtocol/defaultSocket``.
        public static var defaultSocket: URL { HostProtocol.defaultSocket }
    }

    /// Something the host did, for its output.
    public enum Event: Sendable {
        /// Listening on `socket`, freezing with `freezer` (chosen for `reason`).
        case started(freezer: FreezerKind, reason: String, socket: String)
        /// An app a previous host left running was taken over (and thawed if it was frozen).
        case adopted(app: String, thawed: Bool)
        /// An app was started; `pid` is its first process.
        case launched(app: String, pid: Int32)
        /// An app's lifecycle event, from the host's copy of the model.
        case lifecycle(app: String, AppEvent)
        /// An app was frozen, `latency` after it was due; `answered`: whether it acknowledged the notice in time.
        case frozen(app: String, latency: Duration, answered: Bool?)
        /// An app was thawed, `latency` after it was due.
        case thawed(app: String, latency: Duration)
        /// A frozen app was woken: data came on a socket it named (`wake-on-data`).
        case wokenForData(app: String)
        /// A wake of a suspended or exited app (`cause`: data, a location event) waits `after`
        /// for the next one its budget allows (``WakeBudget``).
        case wakePutOff(app: String, cause: String, after: Duration)
        /// An app was killed, and why.
        case killed(app: String, reason: String)
        /// One of an app's processes was found outside its group (the app is killed for it).
        case escaped(app: String, AppProcessGroup.Escape)
        /// An app's last process exited with `status`.
        case exited(app: String, status: Int32)
        /// One of an app's conditions changed state, and what the host did for it.
        case locationEvent(app: String, MonitorEvent, LocationEventDelivery)
        /// The host opened (`true`) or left its watch of the receiver for the apps' conditions.
        case watching(Bool)
        /// A request was refused, and why.
        case refused(String)
        /// Something failed; the host goes on.
        case error(String)
        /// A step of the device's sleep (``Configuration/deviceSleep``).
        case sleep(SleepNotice)
        /// The host stopped: every app thawed, stopped and its group removed.
        case stopped
    }

    /// How it started. What a reload changes is in ``settings``.
    public nonisolated let configuration: Configuration
    /// How it runs now: ``configuration``, with what ``reload(_:)`` changed since.
    public internal(set) var settings: Configuration
    /// The freezer it chose.
    public nonisolated let freezer: Freezer
    let emit: @Sendable (Event) -> Void
    let logger: Logger
    private let server: ControlServer
    private let appServer: ControlServer
    /// Which app a process belongs to, for the sockets' limits (read off the host's executor).
    let membership: AppMembership
    let clock = DispatchClock()
    let start: ContinuousClock.Instant
    var apps: [String: HostedApp] = [:]
    let audio = ALSAObserver()
    /// Where the kernel's word of an app's exit arrives.
    let exits = DispatchQueue(label: "keepalive.host.exits")
    /// Where the host's files are written (an fsync waits on the disk): apps' conditions and
    /// launch records, in the order the host asked, never on its executor.
    nonisolated let files = DispatchQueue(label: "keepalive.host.files")
    /// Where the host's work with processes blocks: a spawn, a wait for an exit, a walk of `/proc`.
    nonisolated let processes = DispatchQueue(label: "keepalive.host.processes")
    private var watchdogPipe: Int32?
    /// The host's own tasks, children of ``run()``'s task group.
    nonisolated let tasks = OwnedTasks()
    /// Effects on apps waiting for their child task to start, by number (``spawn(_:)``).
    private var effects: [Int: () async -> Void] = [:]
    private var effectCount = 0
    /// The loop's inputs (``LoopInput``), and its timer, armed for the machine's deadline.
    var loopInput: AsyncStream<LoopInput>.Continuation?
    var loopTimer: LoopTimer?
    private var isStopping = false
    /// The host's own decisions: its watch, its loop's deadline, the device's sleep, launches for due work.
    var machine: HostMachine
    /// Inputs for the machine that came while the actions of another were done (``decide(_:)``).
    var undecided: [HostMachine.Event] = []
    var isDeciding = false
    var watch: HostLocationWatch?
    /// Other services' wants of fixes (``setFixesWanted(_:by:)``), in the order they were said:
    /// decided one by one once the host serves.
    nonisolated let wants: AsyncStream<HostMachine.Event>.Continuation
    private let wanted: AsyncStream<HostMachine.Event>
    var arrivals: AsyncStream<HostLocationWatch.Arrival>.Continuation?
    let fixObservers = Locked<[@Sendable (Location) -> Void]>([])
    /// The apps in the foreground, readable from any thread (the GeoClue2 service's rule).
    let foregroundApps = Locked<Set<String>>([])
    /// Whether an app runs its scheduled work (or is being launched for it), and how many times
    /// some began: told after every decision, for a refresh wake's hands to wait on.
    nonisolated let scheduledWork = ObservedState<(isRunning: Bool, starts: Int)>((false, 0))
    /// The device's sleep, followed while ``run()`` runs (``Configuration/deviceSleep``).
    var sleepKeeper: DeviceSleepKeeper?

    /// Chooses the freezer, thaws what an earlier host left frozen, and listens on the socket.
    ///
    /// - Throws: ``HostError`` when the freezer asked for is missing or the socket is taken.
    public init(
        configuration: Configuration,
        logger: Logger = Logger(label: "LocationKeepAlive.host"),
        emit: @escaping @Sendable (Event) -> Void = { _ in }
    ) throws(HostError) {
        self.configuration = configuration
        self.settings = configuration
        self.logger = logger
        self.emit = emit
        (wanted, wants) = AsyncStream.makeStream(of: HostMachine.Event.self)
        let monitoring = configuration.deviceSleep.map { ($0.options.budgets[.monitoring] ?? WakeKind.monitoring.defaultBudget).interval }
        machine = HostMachine(followsSleep: configuration.deviceSleep != nil, monitoringInterval: monitoring ?? .zero)
        freezer = try Freezer.choose(configuration.freezer, name: configuration.name, limits: configuration.groupLimits)
        let membership = AppMembership()
        self.membership = membership
        let refused: @Sendable (String) -> Void = { emit(.refused($0)) }
        server = try ControlServer(
            path: configuration.socketPath,
            mode: configuration.socketMode,
            group: configuration.socketGroup,
            limits: configuration.limits,
            owner: membership.app(of:),
            refused: refused
        )
        appServer = try ControlServer(
            path: configuration.appSocketPath,
            mode: 0o666,
            forApps: true,
            limits: configuration.limits,
            owner: membership.app(of:),
            refused: refused
        )
        start = clock.now
        let adopted = Self.adoptLeftovers(configuration, freezer: freezer, logger: logger, emit: emit)
        for app in adopted { membership.add(app.group) }
        if let command = configuration.watchdog {
            watchdogPipe = try HostWatchdog.start(command)
        }
        var quitByUser: Set<String> = []
        let recorded = Self.recordedApps(
            configuration, freezer: freezer, adopted: adopted, quitByUser: &quitByUser, logger: logger, emit: emit
        )
        let known = adopted.map { app in
            (app, HostedAppMachine(
                adopted: true, quitByUser: quitByUser.contains(app.id), dataWakes: configuration.dataWakes, eventWakes: configuration.eventWakes
            ))
        } + recorded.map { ($0.app, $0.machine) }
        for (app, appMachine) in known {
            apps[app.id] = app
            membership.add(app.group)
            _ = machine.handle(.known(app.id, appMachine), HostMachine.Facts(now: .zero, apps: []))
        }
    }

    /// Serves apps until the task is cancelled, then stops them (thawed first: SIGTERM, then
    /// SIGKILL after the termination grace), removes their groups and the socket.
    public func run() async {
        if let sleep = configuration.deviceSleep {
            var sleep = sleep
            if sleep.who == DeviceSleepKeeper.Configuration().who { sleep.who = "keepalive host" }
            sleepKeeper = DeviceSleepKeeper(configuration: sleep, hands: HostSleepHands(host: self)) { [emit] in emit(.sleep($0)) }
        }
        await withDiscardingTaskGroup { group in
            if let keeper = sleepKeeper {
                group.addTask {
                    do throws(SleepError) {
                        try await keeper.run()
                    } catch {
                        self.emit(.error("\(error); the host stops"))
                        await self.shutDown()
                    }
                }
            }
            for server in [server, appServer] { group.addTask { await server.serve() } }
            group.addTask {
                await self.serve()
                self.tasks.finish()  // what was started goes on: the group waits for it
            }
            while let jobs = await tasks.next() {
                for job in jobs { group.addTask { await job() } }
            }
            group.cancelAll()  // the apps are stopped: an effect waiting on a timer ends now
        }
        freezer.removeRoot()
        unlink(configuration.stoppedPath)
        if let watchdogPipe { close(watchdogPipe) }  // the watchdog finds nothing frozen, and ends
        emit(.stopped)
    }

    /// Does `work` on the host as a child task of ``run()``'s group: an effect that takes time
    /// (a notice awaited, a freeze, a grace) is owned by the host's run, which waits for it.
    func spawn(_ work: @escaping () async -> Void) {
        effectCount += 1
        let number = effectCount
        // Kept only when the group takes it (a host that ended takes no more work); the job
        // runs on this actor, so never before it is kept.
        if tasks.add({ [weak self] in await self?.runEffect(number) }) { effects[number] = work }
    }

    private func runEffect(_ number: Int) async {
        guard let work = effects.removeValue(forKey: number) else { return }
        await work()
    }

    /// Serves apps until the task is cancelled or ``shutDown()``, then stops them.
    private func serve() async {
        let notes = [freezer.reason, freezer.processLimitNote, AppConfinement.description].compactMap { $0 }
        emit(.started(freezer: freezer.kind, reason: notes.joined(separator: "; "), socket: configuration.socketPath))
        for app in apps.values where app.isAdopted { observe(app) }
        for app in apps.values {
            restoreConditions(of: app)  // adopted or not running: watched for their events again
            if app.pid == nil { serveScheduledTasks(app) }
        }
        let (arrivals, feed) = AsyncStream.makeStream(of: HostLocationWatch.Arrival.self)
        self.arrivals = feed
        tasks.add { for await arrival in arrivals { await self.fixArrived(arrival) } }
        tasks.add { [wanted] in for await want in wanted { await self.decide(want) } }
        // The loop's inputs: its deadline, an exit the kernel told, the stop. Ends when the
        // task is cancelled.
        let (inputs, input) = AsyncStream.makeStream(of: LoopInput.self, bufferingPolicy: .bufferingNewest(8))
        loopInput = input
        let timer = LoopTimer { input.yield(.deadline) }
        loopTimer = timer
        for server in [server, appServer] {
            server.start(
                handle: { request, connection in await self.handle(request, from: connection) },
                closed: { connection in await self.connectionClosed(connection) }
            )
        }
        decide()  // the watch, the device's sleep
        input.yield(isStopping ? .stop : .deadline)  // a first look at once: exits, due work
        for await next in inputs {
            guard next != .stop, !Task.isCancelled else { break }
            let elapsed = self.elapsed
            for app in apps.values { app.model.advance(to: elapsed) }
            housekeeping()
            serveWaitingWakes()
            decide(.tick)
        }
        timer.cancel()
        loopTimer = nil
        server.stop()
        appServer.stop()
        watch?.stop()
        watch = nil
        feed.finish()
        wants.finish()
        await stopAll()
        server.finish()  // after the apps' terminate notices: then their connections close
        appServer.finish()
    }

    /// Ends ``run()``: its apps are stopped and their groups removed.
    /// A line for `systemctl status`: how many apps, how many frozen. Answered on the host's
    /// own executor, so an answer also shows the host is not stuck (systemd's watchdog).
    public func summary() -> String {
        let frozen = apps.values.filter(\.group.isFrozen).count
        return "\(apps.count) app\(apps.count == 1 ? "" : "s"), \(frozen) frozen"
    }

    /// Stops every app (thawed, asked to stop, killed after the grace) and removes their groups.
    public func shutDown() {
        isStopping = true
        loopInput?.yield(.stop)
    }

    /// Time since the host started: the models' clock.
    var elapsed: Duration { start.duration(to: clock.now) }

    /// Lists every process stopped with signals now, for the watchdog.
    func recordStopped() {
        let stopped = apps.values.flatMap(\.group.stoppedProcesses)
        if stopped.isEmpty {
            unlink(configuration.stoppedPath)
        } else {
            HostWatchdog.record(stopped, in: configuration.stoppedPath)
        }
    }

    /// Collects exited apps, reads ALSA, and gives the models the machine's conditions.
    private func housekeeping() {
        if apps.values.contains(where: { !$0.model.pendingTaskRequests.isEmpty || $0.model.runningScheduledTask != nil }) {
            let conditions = configuration.conditions()
            for app in apps.values { app.model.conditions = conditions }
        }
        let listening = apps.values.contains { $0.model.state.isRunning && $0.model.backgroundModes.contains(.audio) }
        let playing = listening ? audio.playingProcesses() : []
        for app in apps.values {
            if let pid = app.pid {
                if app.isAdopted {
                    // Not the host's child: no status.
                    if app.group.processes().isEmpty { appExited(app, status: ExitStatus(waitStatus: 0)) }
                } else if let status = ExitStatus.reap(pid) {
                    appExited(app, status: status)
                }
            }
            let observed = app.model.state.isRunning && playing.contains(where: app.group.contains)
            if observed != app.observesAudio {
                app.observesAudio = observed
                setAudio(app, playing: observed || app.reportsAudio)
            }
        }
    }

    /// The model's audio assertion follows reported or observed playback.
    func setAudio(_ app: HostedApp, playing: Bool) {
        if playing, app.model.audioPlaybackCount == 0 {
            try? app.model.beginAudioPlayback()
        } else if !playing, app.model.audioPlaybackCount > 0 {
            app.model.endAudioPlayback()
        }
    }

    private func appExited(_ app: HostedApp, status: ExitStatus) {
        app.pid = nil
        app.exitWatch?.cancel()
        app.exitWatch = nil
        let code = status.code
        emit(.exited(app: app.id, status: code))
        if app.model.state != .notRunning {
            app.reason = app.reason ?? "exited with status \(code)"
            app.model.terminate()
        }
        app.groupEvents?.stop()
        recordStopped()
        app.watcher?.cancel()
        decide()
        saveRecord(of: app)  // its scheduled work as it is now
        // Off the host's executor: walking and removing what the app made inside its group
        // never holds up the host's other work.
        tasks.add { [group = app.group, id = app.id] in
            // What its children left running, wherever they went.
            await self.signalEverything(group, leader: nil, SIGKILL)
            await group.waitUntilEmpty(within: .seconds(2))
            try? group.remove()
            await self.groupRemoved(id)
        }
    }

    /// An exited app's group is gone: launched again now if that was asked.
    private func groupRemoved(_ id: String) {
        guard let app = apps[id] else { return }
        handle(.groupRemoved, for: app)
    }

    private func stopAll() async {
        for app in apps.values where app.pid != nil {
            handle(.hostStopping, for: app)
            app.groupEvents?.stop()
            app.group.thawNow()
            app.connection?.send(.terminate)
            await stopEverything(of: app, with: SIGTERM)
        }
        // Waits on the kernel's word, not cut short by the cancellation that ended the run.
        let deadline = ContinuousClock.now + configuration.terminationGrace
        for app in apps.values { await app.group.waitUntilEmpty(within: ContinuousClock.now.duration(to: deadline)) }
        for app in apps.values {
            await stopEverything(of: app, with: SIGKILL)  // the first process too, should it have left the group
            if let pid = app.pid, !app.isAdopted { _ = await processes.awaiting { ExitStatus.reap(pid, waiting: true) } }
            await app.group.waitUntilEmpty(within: .seconds(2))
            try? app.group.remove()
            app.watcher?.cancel()
        }
    }
}

/// What wakes the host's loop.
enum LoopInput: Sendable, Equatable {
    /// The deadline the machine armed came.
    case deadline
    /// The kernel told that an app's first process ended.
    case exited
    /// ``AppHost/shutDown()``.
    case stop
}
