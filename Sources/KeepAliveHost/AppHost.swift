import FoundationEssentials
import Dispatch
import Glibc
public import Logging
import KeepAliveCore
public import KeepAliveHostProtocol
import KeepAliveMonitoring
import KeepAliveSleep

/// The host: plays the operating system's part for apps on Linux, where nothing suspends a
/// background process. Each app runs in a group of its own (cgroup v2, the v1 freezer, or a
/// session stopped with signals); the host keeps the same ``Application`` model the
/// simulator runs for each, on the real clock, and freezes the app's processes when the
/// model suspends it, thaws them when it resumes, and kills them when it is killed.
///
/// Apps and the compositor speak to it on a Unix socket (``HostProtocol``).
public actor AppHost {
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
    /// Every decision: one value per app (its model, its machine), the host's watch, its loop's
    /// deadline, the device's sleep, launches for due work.
    var machine: HostMachine
    var watch: HostLocationWatch?
    /// Other services' wants of fixes (``setFixesWanted(_:by:)``), in the order they were said:
    /// decided one by one once the host serves.
    nonisolated let wants: AsyncStream<(Bool, String)>.Continuation
    private let wanted: AsyncStream<(Bool, String)>
    var arrivals: AsyncStream<HostLocationWatch.Arrival>.Continuation?
    let fixObservers = Locked<[@Sendable (Location) -> Void]>([])
    /// The apps in the foreground, readable from any thread (the GeoClue2 service's rule), as
    /// the host's machine says them.
    let foregroundApps = Locked<Set<String>>([])
    /// Whether an app runs its scheduled work (or is being launched for it), and how many times
    /// some began, as the host's machine says them: for a refresh wake's hands to wait on.
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
        (wanted, wants) = AsyncStream.makeStream(of: (Bool, String).self)
        let monitoring = configuration.deviceSleep.map { ($0.options.budgets[.monitoring] ?? WakeKind.monitoring.defaultBudget).interval }
        machine = HostMachine(
            followsSleep: configuration.deviceSleep != nil,
            monitoringInterval: monitoring ?? .zero,
            housekeepingInterval: configuration.housekeepingInterval,
            noticeTimeout: configuration.noticeTimeout
        )
        freezer = try Freezer.choose(configuration.freezer, name: configuration.name, limits: configuration.groupLimits)
        let membership = AppMembership()
        self.membership = membership
        (server, appServer) = try ControlServer.hostSockets(configuration, owner: membership.app(of:)) { emit(.refused($0)) }
        start = clock.now
        let adopted = HostLeftovers.adopted(configuration, freezer: freezer, logger: logger, emit: emit)
        for (app, _) in adopted { membership.add(app.group) }
        if let command = configuration.watchdog {
            watchdogPipe = try HostWatchdog.start(command)
        }
        for (app, value) in HostLeftovers.known(configuration, freezer: freezer, adopted: adopted, logger: logger, emit: emit) {
            apps[app.id] = app
            membership.add(app.group)
            _ = machine.handle(.known(value), now: .zero)
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
        // The loop's inputs: its deadline, an exit the kernel told, the stop. Ends when the
        // task is cancelled.
        let (inputs, input) = AsyncStream.makeStream(of: LoopInput.self, bufferingPolicy: .bufferingNewest(8))
        loopInput = input
        let timer = LoopTimer { input.yield(.deadline) }
        loopTimer = timer
        let (arrivals, feed) = AsyncStream.makeStream(of: HostLocationWatch.Arrival.self)
        self.arrivals = feed  // from here on, the host decides
        tasks.add { for await arrival in arrivals { await self.fixArrived(arrival) } }
        tasks.add { [wanted] in for await (want, service) in wanted { await self.decide(.fixesWanted(want, by: service)) } }
        for app in apps.values {
            if app.pid == nil { serveScheduledTasks(app) }
            restoreConditions(of: app)  // adopted or not running: watched for their events again
        }
        for server in [server, appServer] {
            server.start(
                handle: { request, connection in await self.handle(request, from: connection) },
                closed: { connection in await self.connectionClosed(connection) }
            )
        }
        decide(.serving)  // the watch, the device's sleep
        input.yield(isStopping ? .stop : .deadline)  // a first look at once: exits, due work
        for await next in inputs {
            guard next != .stop, !Task.isCancelled else { break }
            tick()
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
        HostWatchdog.record(apps.values.flatMap(\.group.stoppedProcesses), in: configuration.stoppedPath)
    }

    /// Collects exited apps and reads ALSA.
    func housekeeping() {
        let listening = machine.apps.values.contains { $0.model.state.isRunning && $0.model.backgroundModes.contains(.audio) }
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
            guard let value = machine.apps[app.id] else { continue }
            let observed = value.model.state.isRunning && playing.contains(where: app.group.contains)
            if observed != value.observesAudio {
                change(app) { value in
                    value.observesAudio = observed
                    value.followAudio()
                }
            }
        }
    }

    private func appExited(_ app: HostedApp, status: ExitStatus) {
        app.exited()
        recordStopped()
        let code = status.code
        emit(.exited(app: app.id, status: code))
        if machine.apps[app.id]?.model.state ?? .notRunning != .notRunning { app.reason = app.reason ?? "exited with status \(code)" }
        decide(.exited(app.id))
        saveRecord(of: app)  // its scheduled work as it is now
        // Off the host's executor: walking and removing what the app made inside its group
        // never holds up the host's other work.
        tasks.add { [group = app.group, id = app.id] in
            // What its children left running, wherever they went.
            await group.signalEverything(leader: nil, SIGKILL, on: self.processes)
            await group.waitUntilEmpty(within: .seconds(2))
            try? group.remove()
            await self.tell(id, .groupRemoved)  // launched again now if that was asked
        }
    }

    private func stopAll() async {
        for app in apps.values where app.pid != nil {
            handle(.hostStopping, for: app)
            await terminate(app)
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
