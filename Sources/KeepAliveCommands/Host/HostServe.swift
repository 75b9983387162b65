import ArgumentParser
import FoundationEssentials
import Glibc
import KeepAliveCore
import KeepAliveGeoClue
import KeepAliveHost
import KeepAliveService
import Logging
import ServiceLifecycle
import UnixSignals

extension KeepAlive.HostCommand {
    /// The host daemon.
    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run the host (the default): apps are frozen when the policy suspends them.",
            discussion: """
                SIGTERM or SIGINT stop it: every app is thawed, asked to stop (SIGTERM), killed after 2 s, \
                and its cgroup removed.
                """
        )

        @OptionGroup var settings: ConfigurationOption

        @OptionGroup var socket: SocketOption

        @Option(help: "How apps are frozen: auto is the first that works here.")
        var freezer: FreezerArgument = .auto

        /// Without --policy: ios13.
        @OptionGroup var rules: PolicyOptions

        @Option(
            name: .customLong("notice-timeout"),
            help: ArgumentHelp("How long an app has to answer the will-suspend notice.", valueName: "duration")
        )
        var noticeTimeout: Parsed<Duration> = "500ms"

        @Option(help: ArgumentHelp("The folder of the host's cgroups (one per host).", valueName: "name"))
        var name: String = "keepalive.host"

        @Option(help: ArgumentHelp("Socket permission bits, octal: 600, or 660 with --group.", valueName: "mode"))
        var mode: String = "600"

        @Option(
            help: ArgumentHelp(
                "The socket's group: its members may use the host, and launch apps as themselves.",
                valueName: "name"
            )
        )
        var group: String?

        @Option(
            name: .customLong("app-user"),
            help: ArgumentHelp("Who an app runs as when root launches it without --user.", valueName: "name")
        )
        var appUser: String?

        @Flag(
            name: .customLong("allow-root-apps"),
            inversion: .prefixedNo,
            help: "Let root launch apps as root (--user root): nothing then keeps such an app in its group."
        )
        var allowRootApps = false

        @Flag(
            name: .customLong("signal-other-users"),
            inversion: .prefixedNo,
            help: "With --freezer signal, run apps of users other than the host's (a process of theirs outside the app can SIGCONT it)."
        )
        var signalOtherUsers = false

        @Option(
            name: .customLong("event-budget"),
            help: ArgumentHelp("How long an app woken or launched for a location event runs before the policy applies again.", valueName: "duration")
        )
        var eventBudget: Parsed<Duration> = "10s"

        @Option(
            name: .customLong("gpsd"),
            help: ArgumentHelp("The gpsd the host watches for its apps' conditions.", valueName: "host:port")
        )
        var gpsd: String = "localhost:2947"

        @Option(
            help: ArgumentHelp(
                "Where each app's conditions are kept (APP.json); default /var/lib/location-keepalive/monitors for root, else under $XDG_STATE_HOME.",
                valueName: "folder"
            )
        )
        var monitors: String?

        @Option(
            name: .customLong("app-cgroups"),
            help: ArgumentHelp("Groups an app may make inside its own (cgroup.max.descendants).", valueName: "count")
        )
        var appCgroups = AppGroupLimits().groups

        @Option(
            name: .customLong("app-cgroup-depth"),
            help: ArgumentHelp("How deep an app's groups may nest (cgroup.max.depth).", valueName: "count")
        )
        var appCgroupDepth = AppGroupLimits().depth

        @Option(
            name: .customLong("app-processes"),
            help: ArgumentHelp("Processes and threads an app may run at once (pids.max).", valueName: "count")
        )
        var appProcesses = AppGroupLimits().processes

        @Option(
            name: .customLong("connections-per-app"),
            help: ArgumentHelp("Connections to the host an app's processes may hold open.", valueName: "count")
        )
        var connectionsPerApp = ControlLimits().connectionsPerApp

        @Option(
            name: .customLong("connections-per-user"),
            help: ArgumentHelp("Connections to the host a user may hold open outside every app.", valueName: "count")
        )
        var connectionsPerUser = ControlLimits().connectionsPerUser

        @Option(
            name: .customLong("data-wakes"),
            help: ArgumentHelp("Wakes of a frozen app by data on its sockets: at once/one more each.", valueName: "count/duration")
        )
        var dataWakes: Parsed<WakeBudget> = "2/20m"

        @Option(
            name: .customLong("event-wakes"),
            help: ArgumentHelp(
                "Wakes or launches of an app for location events and scheduled tasks: at once/one more each.",
                valueName: "count/duration"
            )
        )
        var eventWakes: Parsed<WakeBudget> = "10/6m"

        @Flag(
            inversion: .prefixedNo,
            help: ArgumentHelp(
                "Serve GeoClue2 (org.freedesktop.GeoClue2) on the system bus, from the host's gpsd watch and authorization store.",
                discussion: "The bus is $DBUS_SYSTEM_BUS_ADDRESS, else the system's; Debian's geoclue must not hold the name."
            )
        )
        var geoclue = false

        @Flag(inversion: .prefixedNo, help: "One JSON object per line.")
        var json = false

        /// One lock for the apps the rules let run; their refresh tasks wake the device.
        @OptionGroup(title: "Device sleep") var deviceSleep: DeviceSleepOptions

        /// What the options' types cannot say: each was read, typed, by ArgumentParser.
        func validate() throws {
            if eventBudget.value <= .zero {
                throw ValidationError("--event-budget must be a positive duration such as 10s, not '\(eventBudget.text)'")
            }
            if noticeTimeout.value < .zero {
                throw ValidationError("--notice-timeout must be a duration such as 500ms, not '\(noticeTimeout.text)'")
            }
            guard !name.isEmpty, !name.contains("/"), name != ".", name != ".." else {
                throw ValidationError("--name must be a folder name, not '\(name)'")
            }
            guard let bits = UInt32(mode, radix: 8), bits <= 0o777 else {
                throw ValidationError("--mode must be octal permission bits such as 600, not '\(mode)'")
            }
            if monitors?.isEmpty == true { throw ValidationError("--monitors needs a folder") }
            for (flag, value, least) in [
                ("--app-cgroups", appCgroups, 0), ("--app-cgroup-depth", appCgroupDepth, 0), ("--app-processes", appProcesses, 1),
                ("--connections-per-app", connectionsPerApp, 1), ("--connections-per-user", connectionsPerUser, 1),
            ] where value < least {
                throw ValidationError("\(flag) must be a whole number of at least \(least), not \(value)")
            }
            _ = try gpsdEndpoint()
        }

        /// `--gpsd`'s host and port.
        private func gpsdEndpoint() throws -> (host: String, port: Int) {
            var source = SourceOptions()
            source.gpsd = gpsd
            let endpoint = try source.endpoint()
            return (endpoint.host, endpoint.port)
        }

        /// Each client costs the host a descriptor: the soft limit goes up to the hard one (at
        /// most 65,536), as a service that needs them should (systemd's soft 1,024 is for select).
        static func raiseDescriptorLimit() {
            var limit = rlimit()
            guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
            let wanted = min(limit.rlim_max, 65_536)
            if limit.rlim_cur < wanted {
                limit.rlim_cur = wanted
                setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            }
        }

        func makeConfiguration() throws -> AppHost.Configuration {
            var configuration = AppHost.Configuration(socket: URL(fileURLWithPath: socket.socket))
            configuration.freezer = freezer.kind
            configuration.profile = rules.profile(default: .ios13)
            configuration.profile.eventBudget = eventBudget.value
            configuration.noticeTimeout = noticeTimeout.value
            configuration.name = name
            configuration.socketMode = UInt32(mode, radix: 8) ?? 0o600  // checked by validate()
            configuration.socketGroup = group
            configuration.defaultUser = appUser
            configuration.allowsRootApps = allowRootApps
            configuration.allowsSignalsForOtherUsers = signalOtherUsers
            let endpoint = try gpsdEndpoint()
            configuration.locationSource = { GPSDSource(host: endpoint.host, port: endpoint.port) }
            if let monitors { configuration.monitorFolder = URL(fileURLWithPath: monitors) }
            configuration.dataWakes = dataWakes.value
            configuration.eventWakes = eventWakes.value
            configuration.deviceSleep = deviceSleep.configuration
            configuration.groupLimits.groups = appCgroups
            configuration.groupLimits.depth = appCgroupDepth
            configuration.groupLimits.processes = appProcesses
            configuration.limits.connectionsPerApp = connectionsPerApp
            configuration.limits.connectionsPerUser = connectionsPerUser
            configuration.watchdog = [
                Self.executable, "host", "watchdog", "--freezer", freezer.rawValue, "--name", name,
                "--stopped-file", configuration.stoppedFile.path,
            ]
            return configuration
        }

        func run() async throws {
            Self.raiseDescriptorLimit()
            let interrupts = await Interrupts.trap()
            let hangups = await ConfigurationReload.signals(for: settings.config)
            let output = HostOutput(json: json)
            let notifier = SystemdNotifier()
            let host: AppHost
            let geoClue: GeoClueService?
            do {
                let configuration = try makeConfiguration()
                host = try AppHost(configuration: configuration) { event in
                    output.write(event)
                    if case .started(let freezer, let reason, let socket) = event {
                        notifier.ready(status: "listening on \(socket); freezer \(freezer.rawValue) (\(reason))")
                    }
                }
                geoClue = try startGeoClue(host, configuration, output: output)
            } catch {
                output.write(AppHost.Event.error("\(error)"))
                notifier.status("could not start: \(error)")
                throw ExitCode(1)
            }
            defer { geoClue?.stop() }
            let group = ServiceGroup(
                configuration: .init(
                    services: [.init(service: HostService(host: host, notifier: notifier))],
                    logger: Logger(label: "keepalive.host")
                )
            )
            let reloads = hangups.map { hangups in
                Task { [json] in
                    for await _ in hangups { await Self.reload(host, json: json) }
                }
            }
            defer { reloads?.cancel() }
            try await interrupts.run(group)
        }

        /// The settings a running host takes on SIGHUP (``AppHost/reload(_:)``); the others
        /// wait for a restart.
        static let reloadable: Set = [
            "policy", "budget", "grace", "event-budget", "notice-timeout", "data-wakes", "event-wakes", "app-user",
            "allow-root-apps", "signal-other-users",
        ]

        /// SIGHUP: the configuration read again and, when good, what can change while the host
        /// runs applied; what cannot is named, and waits for a restart.
        static func reload(_ host: AppHost, json: Bool) async {
            switch ConfigurationReload.check(Self.self) {
            case .refused(let why):
                ReloadReport(outcome: .refused, message: "\(why); the running settings stay").write(json: json)
            case .accepted(let command, let expansion, let changed):
                let configuration: AppHost.Configuration
                do {
                    configuration = try command.makeConfiguration()
                } catch {
                    ReloadReport(outcome: .refused, message: "\(KeepAlive.message(for: error)); the running settings stay").write(json: json)
                    return
                }
                await host.reload(configuration)
                let applied = changed.filter(reloadable.contains)
                let waiting = changed.filter { !reloadable.contains($0) }
                var message = "\(expansion.file ?? "the configuration"): "
                if changed.isEmpty {
                    message += "unchanged since the host started"
                } else {
                    if !applied.isEmpty { message += "applied \(applied.joined(separator: ", ")) (to apps launched from now on)" }
                    if !waiting.isEmpty {
                        message += (applied.isEmpty ? "" : "; ") + "\(waiting.joined(separator: ", ")) take effect at the next restart"
                    }
                }
                ReloadReport(outcome: changed.isEmpty ? .unchanged : .applied, message: message).write(json: json)
            }
        }
    }
}

extension KeepAlive.HostCommand.Serve {
    /// This program's own path, for the watchdog.
    static var executable: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ProcessArguments.current[0]
    }
}

extension KeepAlive {
    /// The services, `run` and `host`, take one malloc arena (``ServiceHeap``): called before
    /// anything starts a thread. Every other command keeps malloc's default.
    package static func prepareServiceHeap(_ arguments: [String] = ProcessArguments.current) {
        guard arguments.count > 1, ["run", "host"].contains(arguments[1]) else { return }
        ServiceHeap.useOneArena()
    }

    /// Runs `keepalive host watchdog ...` and exits, before anything starts the Swift
    /// concurrency runtime's threads; returns for every other command. The watchdog waits its
    /// whole life in one blocking read, and a process whose Dispatch worker pool has started is
    /// woken every second by the pool's monitor (measured: 60 wake-ups a minute, for nothing).
    package static func runWatchdogIfAsked(_ arguments: [String] = ProcessArguments.current) {
        guard arguments.count > 2, arguments[1] == "host", arguments[2] == "watchdog" else { return }
        do {
            let command = try HostCommand.Watchdog.parse(Array(arguments.dropFirst(3)))
            try command.run()
            Glibc.exit(0)
        } catch {
            HostCommand.Watchdog.exit(withError: error)
        }
    }
}

extension KeepAlive.HostCommand {
    /// The host's watchdog: started by the host, never by hand.
    struct Watchdog: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Thaw what a host left frozen once it ends (started by `keepalive host`).",
            shouldDisplay: false
        )

        @Option var freezer: FreezerArgument
        @Option var name: String
        @Option(name: .customLong("stopped-file")) var stoppedFile: String

        func run() throws {
            let done = HostWatchdog.watch(freezer: freezer.kind, name: name, stoppedFile: URL(fileURLWithPath: stoppedFile))
            if !done.isEmpty {
                Console.error("keepalive host watchdog: the host ended; \(done.joined(separator: ", "))\n")
            }
        }
    }
}

/// The host as a swift-service-lifecycle service: graceful shutdown stops its apps. Under
/// systemd, `STATUS=` says how many apps are frozen, and `WATCHDOG=1` goes out only when the
/// host's actor answered since the last one (a stuck host is restarted).
struct HostService: Service {
    let host: AppHost
    let notifier: SystemdNotifier

    func run() async throws {
        let pings = Task { [host, notifier] in
            guard notifier.socket != nil else { return }
            let interval = notifier.watchdogInterval.map { $0 / 4 } ?? .seconds(5)
            var last = ""
            while !Task.isCancelled {
                let summary = await host.summary()
                if notifier.watchdogInterval != nil { notifier.watchdog() }
                if summary != last {
                    notifier.status(summary)
                    last = summary
                }
                try? await DispatchClock().sleep(for: interval)
            }
        }
        let startedUp = Task {
            try? await DispatchClock().sleep(for: StartUpPages.startUpPeriod)
            if Task.isCancelled { return }
            let release = StartUpPages.release()
            Logger(label: "keepalive.host").debug("start-up pages released", metadata: ["release": "\(release)"])
        }
        defer { startedUp.cancel() }
        await withGracefulShutdownHandler {
            await host.run()
        } onGracefulShutdown: {
            notifier.stopping(status: "stopping: thawing and stopping every app")
            Task { await host.shutDown() }
        }
        pings.cancel()
    }
}
