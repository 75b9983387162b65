import ArgumentParser
import FoundationEssentials
import Glibc
import KeepAliveCore
import KeepAliveHost
import KeepAliveHostProtocol
import KeepAliveMonitoring
import KeepAliveService
import Logging
import ServiceLifecycle
import UnixSignals
import KeepAliveAudio

extension KeepAlive {
    /// The keep-alive service, on the real clock, against gpsd or a replay, with real silent audio.
    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run the keep-alive service.",
            discussion: """
                Starts in the foreground (watching fixes) unless --background. SIGUSR1 sends it to the \
                background, SIGUSR2 brings it back; SIGTERM or SIGINT stop it gracefully (exit 0).
                """
        )

        @OptionGroup var settings: ConfigurationOption

        @OptionGroup var source: SourceOptions

        @OptionGroup(title: "Journal and delivery") var delivery: DeliveryOptions

        /// Without --policy: unlimited, a plain Linux daemon (under --host, the host's rules).
        @OptionGroup var rules: PolicyOptions

        @Option(
            help:
                "How the service keeps itself alive (monitoring goes with --conditions or --waypoints)."
        )
        var strategy: Parsed<KeepAliveStrategyKind> = "hybrid"

        @OptionGroup(title: "Monitoring") var monitoring: MonitoringOptions

        @OptionGroup(title: "Device sleep") var deviceSleep: DeviceSleepOptions

        @Option(
            name: .customLong("receiver-power"),
            help: ArgumentHelp(
                "How the GNSS receiver is powered down between fixes: auto (the first that works here), ubx (a u-blox, through gpsd), "
                    + "modemmanager (a modem's GNSS), hook (gpsd's device-hook), off.",
                valueName: "way"
            )
        )
        var receiverPower: Parsed<ReceiverPowerWay> = "auto"

        @Option(
            name: .customLong("mode"),
            help: ArgumentHelp(
                "Monitoring: what is journaled, OwnTracks' modes (or their numbers -1, 0, 1, 2); every fix of the watch without it.",
                valueName: "mode"
            )
        )
        var mode: Parsed<ReportingMode>?

        @Option(
            name: .customLong("move-displacement"),
            help: ArgumentHelp("Move mode: journal a fix once the device moved this many metres (OwnTracks' locatorDisplacement).", valueName: "m")
        )
        var moveDisplacement: Double = 100

        @Option(
            name: .customLong("move-interval"),
            help: ArgumentHelp("Move mode: or once this long passed (OwnTracks' locatorInterval).", valueName: "duration")
        )
        var moveInterval: Parsed<Duration> = "300s"

        @Option(
            name: .customLong("monitor-state"),
            help: ArgumentHelp(
                "Monitoring, standalone: keep the conditions' states and last events in this file (under --host, the host keeps them).",
                valueName: "file"
            )
        )
        var monitorState: String?

        @Option(help: ArgumentHelp("Hybrid: time between polls or pulses.", valueName: "duration"))
        var interval: Parsed<Duration> = "10s"

        @Option(help: ArgumentHelp("Hybrid: length of a silent pulse.", valueName: "duration"))
        var pulse: Parsed<Duration> = "200ms"

        @Option(
            name: .customLong("callback-interval"),
            help: ArgumentHelp("Hybrid: client call-back interval.", valueName: "duration")
        )
        var callbackInterval: Parsed<Duration> = "30s"

        @Option(name: .customLong("audio-device"), help: "ALSA device: default, null (no sound card), hw:0...")
        var audioDevice: String = "default"

        @Option(
            name: .customLong("audio-wav"),
            help: ArgumentHelp("Write the silence to this WAV file instead.", valueName: "path")
        )
        var audioWAV: String?

        @Flag(
            name: .customLong("audio-keep-open"),
            inversion: .prefixedNo,
            help: "Keep the audio device open between pulses (default: drain and close)."
        )
        var audioKeepOpen = false

        @Option(help: ArgumentHelp("Declared background modes.", valueName: "list"))
        var modes: Parsed<BackgroundModes> = "audio,location"

        @Flag(inversion: .prefixedNo, help: "Start in the background.")
        var background = false

        @Flag(
            name: .customLong("host"),
            inversion: .prefixedNo,
            help:
                "Run as an app of `keepalive host`: its rules and lifecycle are the host's (launch it with `keepalive host launch`)."
        )
        var hosted = false

        @Option(
            name: .customLong("metrics"),
            help: ArgumentHelp(
                "Serve Prometheus metrics on http://HOST:PORT/metrics (HOST: 127.0.0.1 unless given).",
                valueName: "[host:]port"
            )
        )
        var metrics: MetricsAddress?

        @Option(
            name: .customLong("host-socket"),
            help: ArgumentHelp("With --host: the host's socket (default: $KEEPALIVE_HOST_SOCKET).", valueName: "path")
        )
        var hostSocket: String?

        /// What ties the options together: each was read, typed, by ArgumentParser.
        func validate() throws {
            if audioDevice.isEmpty {
                throw ValidationError("--audio-device needs a device name, such as default or null")
            }
            if audioWAV?.isEmpty == true { throw ValidationError("--audio-wav needs a path") }
            _ = try hybridOptions()
            try monitoring.validate(for: strategy.value, needs: mode == nil ? "--conditions FILE or --waypoints FILE" : nil)
            if mode != nil, strategy.value != .monitoring { throw ValidationError("--mode goes with --strategy monitoring") }
            _ = try reportingMode()
            if monitorState != nil, strategy.value != .monitoring {
                throw ValidationError("--monitor-state goes with --strategy monitoring")
            }
            if monitorState?.isEmpty == true { throw ValidationError("--monitor-state needs a file") }
            if monitorState != nil, hosted {
                throw ValidationError("--monitor-state is for the service alone: under --host the host keeps the states")
            }
            if hostSocket != nil, !hosted { throw ValidationError("--host-socket goes with --host") }
            if hostSocket?.isEmpty == true { throw ValidationError("--host-socket needs a path") }
        }

        /// The hybrid driver's options (its interval, pulse and call-back interval agree).
        private func hybridOptions() throws -> HybridKeepAliveMachine.Options {
            try DriverParsing.hybrid(interval: interval.value, pulse: pulse.value, callbackInterval: callbackInterval.value)
        }

        /// `--mode`, with move mode's settings.
        private func reportingMode() throws -> ReportingMode? {
            guard var parsed = mode?.value else { return nil }
            parsed.displacement = moveDisplacement
            parsed.interval = moveInterval.value
            do {
                try parsed.validate()
            } catch {
                throw ValidationError("--mode \(mode?.text ?? ""): \(error)")
            }
            if parsed.kind == .move, hosted {
                throw ValidationError("--mode move keeps the app watching, and under --host the host watches for it: use significant or manual")
            }
            return parsed
        }

        /// The service's configuration, made once from the options.
        private func makeConfiguration() throws -> KeepAliveService.Configuration {
            var configuration = KeepAliveService.Configuration()
            configuration.profile = rules.profile(default: .unlimited)
            configuration.strategy = strategy.value
            configuration.hybrid = try hybridOptions()
            configuration.backgroundModes = modes.value
            configuration.audio = audioWAV.map { .wav(URL(fileURLWithPath: $0)) } ?? .alsa(device: audioDevice)
            configuration.startsInBackground = background
            configuration.keepsAudioDeviceOpen = audioKeepOpen
            configuration.reportingMode = try reportingMode()
            // An app of the host leaves the device's sleep to the host, unless told otherwise.
            configuration.deviceSleep = hosted && deviceSleep.following == .auto ? nil : deviceSleep.configuration
            return configuration
        }

        func run() async throws {
            // A journal, a destination or waypoints: the journal commands, before anything is done.
            let needsJournal = delivery.isRequested || monitoring.waypoints != nil
            let journalCommands = needsJournal ? try JournalLink.required() : nil
            let interrupts = await Interrupts.trap()
            let hangups = await ConfigurationReload.signals(for: settings.config)
            let output = Output(json: source.json)
            let environment = ProcessInfo.processInfo.environment
            let appID = source.app ?? (hosted ? environment["KEEPALIVE_APP"] : nil) ?? "keepalive"
            var configuration = try makeConfiguration()
            if hosted { try await joinHost(as: appID, into: &configuration, output: output) }
            let authorization = LocationAuthorizationManager(
                application: appID,
                file: source.authFile.map { AuthorizationFile(url: URL(fileURLWithPath: $0)) }
            )
            if monitoring.isGiven || configuration.reportingMode != nil {
                configuration.monitoring = try readMonitoring(output: output)
            }
            let endpoint = try startMetrics(into: &configuration, output: output)
            defer { endpoint?.stop() }
            // The journal before the source: a journal that cannot open fails the command before
            // a receiver or a replay (which may be a FIFO that blocks until written) is opened.
            var journal: ServiceJournal?
            if delivery.isRequested, let journalCommands {
                journal = try openJournal(journalCommands, into: &configuration, output: output)
            }
            let power = try await source.makeReceiverPower(receiverPower.value)
            let manager = try source.makeManager(authorization: authorization, receiverPower: power)
            let service = KeepAliveService(configuration: configuration, locationManager: manager, authorization: authorization)
            try await serve(service, journal: journal, output: output, interrupts: interrupts, hangups: hangups)
        }

        /// `--host`: says hello to the host, whose rules, modes and state the service takes.
        private func joinHost(as appID: String, into configuration: inout KeepAliveService.Configuration, output: Output) async throws {
            let environment = ProcessInfo.processInfo.environment
            let socket = hostSocket ?? environment["KEEPALIVE_HOST_SOCKET"] ?? AppHost.Configuration.defaultSocket.path
            do {
                let client = try HostClient(socket: URL(fileURLWithPath: socket))
                let (profile, state, modes) = try await client.hello(app: appID)
                configuration.profile = profile
                configuration.backgroundModes = modes  // what the host launched it with
                configuration.startsInBackground = state == "background"
                configuration.host = (client, appID)
            } catch {
                output.write(error: error)
                throw ExitCode(1)
            }
        }

        /// The monitoring strategy's conditions: the host's to watch, or the service's own.
        private func readMonitoring(output: Output) throws -> ServiceMonitoring {
            do {
                let wanted = try monitoring.read()
                return hosted
                    ? try ServiceMonitoring.hosted(wanted, assuming: monitoring.assuming)
                    : try ServiceMonitoring.standalone(
                        wanted,
                        assuming: monitoring.assuming,
                        file: monitorState.map { URL(fileURLWithPath: $0) }
                    )
            } catch let error as MonitoringError where error.code == .invalidCondition {
                output.write(error: ValidationError("the conditions file \(monitoring.conditions ?? ""): \(error.message)"))
                throw ExitCode(1)
            } catch {
                output.write(error: error)
                throw ExitCode(1)
            }
        }

        /// `--metrics`: the endpoint, listening, and said where.
        private func startMetrics(into configuration: inout KeepAliveService.Configuration, output: Output) throws -> MetricsEndpoint? {
            guard let metrics else { return nil }
            let endpoint: MetricsEndpoint
            do {
                endpoint = try MetricsEndpoint(host: metrics.host, port: metrics.port)
            } catch {
                output.write(error: error)
                throw ExitCode(1)
            }
            configuration.recordsMetrics = true
            if source.json {
                Console.out(JSONLine(["event": "metrics", "url": .string(endpoint.url)]).bytes)
            } else {
                Console.out("# metrics on \(endpoint.url)\n")
            }
            return endpoint
        }

        /// `--journal`, `--deliver`: the journal, its delivery and the remote commands, given to the service.
        private func openJournal(
            _ journalCommands: any JournalCommands,
            into configuration: inout KeepAliveService.Configuration,
            output: Output
        ) throws -> ServiceJournal {
            let journal: ServiceJournal
            do {
                journal = try journalCommands.service(
                    delivery,
                    output: output,
                    recordsMetrics: configuration.recordsMetrics,
                    waypoints: monitoring.waypoints,
                    isLive: source.replay == nil
                )
            } catch {
                output.write(error: error)
                throw ExitCode(1)
            }
            configuration.journal = journal.recorder
            configuration.eventRecorder = journal.eventRecorder
            configuration.delivery = journal.delivery
            configuration.stopTimeout = try delivery.stopBound()
            configuration.remote = journal.remote
            return journal
        }

        /// Runs the service in a ServiceLifecycle group until a signal stops it; a SIGHUP whose
        /// configuration changed stops it to start again in place.
        private func serve(
            _ service: KeepAliveService,
            journal: ServiceJournal?,
            output: Output,
            interrupts: Interrupts,
            hangups: UnixSignalsSequence?
        ) async throws {
            var queueDepth: @Sendable () -> Int? = { nil }
            if let journal { queueDepth = journal.queueDepth }
            let systemd = SystemdReporting(notifier: SystemdNotifier(), queueDepth: queueDepth)
            let restarting = Locked(false)
            let group = ServiceGroup(
                configuration: .init(
                    services: [
                        .init(service: RunService(service: service, output: output, systemd: systemd, restarting: restarting))
                    ],
                    logger: Logger(label: "keepalive.run")
                )
            )
            let reloads = hangups.map { hangups in
                Task { [json = source.json] in
                    for await _ in hangups {
                        if await Self.reload(json: json) {
                            restarting.withLock { $0 = true }
                            await group.triggerGracefulShutdown()
                            return
                        }
                    }
                }
            }
            try await interrupts.run(group)
            reloads?.cancel()
            // A SIGTERM during a reload's stop is a stop: it is not undone by starting again.
            if restarting.withLock({ $0 }), !interrupts.wasRequested { ConfigurationReload.restartInPlace() }
        }

        /// SIGHUP: the configuration read again; `true` when the service should stop and start
        /// again with it (it changed and is good), after saying so.
        static func reload(json: Bool) async -> Bool {
            switch ConfigurationReload.check(Run.self) {
            case .refused(let why):
                ReloadReport(outcome: .refused, message: "\(why); the running settings stay").write(json: json)
                return false
            case .accepted(_, let expansion, let changed) where changed.isEmpty:
                ReloadReport(outcome: .unchanged, message: "\(expansion.file ?? "the configuration") is unchanged").write(json: json)
                return false
            case .accepted(_, _, let changed):
                ReloadReport(
                    outcome: .restarting,
                    message: "\(changed.joined(separator: ", ")) changed: stopping gracefully and starting again in place (same process id)"
                ).write(json: json)
                return true
            }
        }
    }
}

/// The keep-alive service as a swift-service-lifecycle service: graceful shutdown ends the
/// run loop, which ends tasks, stops audio and closes gpsd. Under systemd it reports readiness
/// and status, and pings the watchdog while the run loop turns.
struct RunService: Service {
    let service: KeepAliveService
    let output: Output
    let systemd: SystemdReporting
    /// Set when the stop is a reload's: systemd hears RELOADING=1, not STOPPING=1, and the
    /// process starts again in place.
    var restarting = Locked(false)

    /// Fault injection for the watchdog's tests: the run loop hangs (blocks its thread) this many
    /// seconds after the start, as a deadlocked service would.
    static let hangVariable = "KEEPALIVE_FAULT_HANG_RUN_LOOP_AFTER"

    func run() async throws {
        let (commands, send) = AsyncStream.makeStream(of: ApplicationCommand.self)
        // Trapped before the service starts (and says so): a SIGUSR1 that follows its `started`
        // line moves it, never ends the process by the default action.
        let userSignals = await UnixSignalsSequence(trapping: .sigusr1, .sigusr2)
        let signals = Task {
            for await signal in userSignals {
                send.yield(signal == .sigusr1 ? .enterBackground : .enterForeground)
            }
        }
        let readiness = Task {
            try? await DispatchClock().sleep(for: SystemdReporting.readyAtTheLatest)
            if Task.isCancelled { return }
            systemd.readyIfStillWaiting()
            // Start-up is over (the same 10 s): the code only it ran is given back.
            let release = StartUpPages.release()
            Logger(label: "keepalive.run").debug("start-up pages released", metadata: ["release": "\(release)"])
        }
        let turns = Locked(0)
        let watchdog = systemd.notifier.watchdogInterval.map { interval in
            // Four chances per WatchdogSec: a heartbeat asks the run loop for a turn, and only a
            // turn taken since the last look earns a ping. A stuck loop earns none, and systemd
            // restarts the service.
            Task {
                var seen = -1
                while !Task.isCancelled {
                    send.yield(.heartbeat)
                    try? await DispatchClock().sleep(for: interval / 4)
                    let now = turns.withLock { $0 }
                    if now != seen {
                        systemd.notifier.watchdog()
                        seen = now
                    }
                }
            }
        }
        let hangAfter = ProcessInfo.processInfo.environment[Self.hangVariable].flatMap(Double.init)
        let started = ContinuousClock.now
        await withGracefulShutdownHandler {
            await service.run(
                commands: commands,
                turned: {
                    turns.withLock { $0 += 1 }
                    if let hangAfter, ContinuousClock.now - started > .milliseconds(Int64(hangAfter * 1000)) {
                        while true { sleep(3600) }  // the fault asked for: a run loop that never turns again
                    }
                }
            ) { event in
                output.write(event)
                systemd.observe(event)
            }
        } onGracefulShutdown: {
            if restarting.withLock({ $0 }) {
                systemd.reloading()
            } else {
                systemd.stopping()
            }
            send.finish()
        }
        readiness.cancel()
        watchdog?.cancel()
        signals.cancel()
    }
}
