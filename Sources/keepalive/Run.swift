import ArgumentParser
import FoundationEssentials
import LocationKeepAlive
import Logging
import ServiceLifecycle
import UnixSignals

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

        @OptionGroup var source: SourceOptions

        /// Without --policy: unlimited, a plain Linux daemon (under --host, the host's rules).
        @OptionGroup var rules: PolicyOptions

        @Option(
            help: "hybrid (default), none, background-task, renewal, audio-loop, continuous-location, scheduled-refresh."
        )
        var strategy: String = "hybrid"

        @Option(help: ArgumentHelp("Hybrid: time between polls or pulses.", valueName: "duration"))
        var interval: String = "10s"

        @Option(help: ArgumentHelp("Hybrid: length of a silent pulse.", valueName: "duration"))
        var pulse: String = "200ms"

        @Option(
            name: .customLong("callback-interval"),
            help: ArgumentHelp("Hybrid: client call-back interval.", valueName: "duration")
        )
        var callbackInterval: String = "30s"

        @Option(name: .customLong("audio-device"), help: "ALSA device: default, null (no sound card), hw:0...")
        var audioDevice: String = "default"

        @Option(
            name: .customLong("audio-wav"),
            help: ArgumentHelp("Write the silence to this WAV file instead.", valueName: "path")
        )
        var audioWAV: String?

        @Flag(
            name: .customLong("audio-keep-open"),
            help: "Keep the audio device open between pulses (default: drain and close)."
        )
        var audioKeepOpen = false

        @Option(help: ArgumentHelp("Declared background modes.", valueName: "list"))
        var modes: String = "audio,location"

        @Flag(help: "Start in the background.")
        var background = false

        @Flag(
            name: .customLong("host"),
            help:
                "Run as an app of `keepalive host`: its rules and lifecycle are the host's (launch it with `keepalive host launch`)."
        )
        var hosted = false

        @Option(
            name: .customLong("host-socket"),
            help: ArgumentHelp("With --host: the host's socket (default: $KEEPALIVE_HOST_SOCKET).", valueName: "path")
        )
        var hostSocket: String?

        func validate() throws {
            if audioDevice.isEmpty {
                throw ValidationError("--audio-device needs a device name, such as default or null")
            }
            if audioWAV?.isEmpty == true { throw ValidationError("--audio-wav needs a path") }
            _ = try makeConfiguration()
            if hostSocket != nil, !hosted { throw ValidationError("--host-socket goes with --host") }
            if hostSocket?.isEmpty == true { throw ValidationError("--host-socket needs a path") }
        }

        func makeConfiguration() throws -> KeepAliveService.Configuration {
            var configuration = KeepAliveService.Configuration()
            configuration.profile = try rules.profile(default: "unlimited")
            configuration.strategy = try DriverParsing.strategy(strategy)
            configuration.hybrid = try DriverParsing.hybrid(
                interval: interval,
                pulse: pulse,
                callbackInterval: callbackInterval
            )
            guard let parsedModes = BackgroundModes(parsing: modes) else {
                throw ValidationError("--modes takes audio, location, fetch, processing or none, comma-separated")
            }
            configuration.backgroundModes = parsedModes
            configuration.audio = audioWAV.map { .wav(URL(fileURLWithPath: $0)) } ?? .alsa(device: audioDevice)
            configuration.startsInBackground = background
            configuration.keepsAudioDeviceOpen = audioKeepOpen
            return configuration
        }

        func run() async throws {
            let output = Output(json: source.json)
            let environment = ProcessInfo.processInfo.environment
            let appID = source.app ?? (hosted ? environment["KEEPALIVE_APP"] : nil) ?? "keepalive"
            var configuration = try makeConfiguration()
            if hosted {
                let socket =
                    hostSocket ?? environment["KEEPALIVE_HOST_SOCKET"] ?? AppHost.Configuration.defaultSocketPath
                do {
                    let client = try HostClient(socketPath: socket)
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
            let authorization = LocationAuthorizationManager(
                application: appID,
                file: source.authFile.map { AuthorizationFile(url: URL(fileURLWithPath: $0)) }
            )
            let manager = try source.makeManager(authorization: authorization)
            Interrupts.exitOnSecond()
            let service = KeepAliveService(
                configuration: configuration,
                locationManager: manager,
                authorization: authorization
            )
            let logger = Logger(label: "keepalive.run")
            let group = ServiceGroup(
                configuration: .init(
                    services: [.init(service: RunService(service: service, output: output))],
                    gracefulShutdownSignals: [.sigterm, .sigint],
                    logger: logger
                )
            )
            try await group.run()
        }
    }
}

/// The keep-alive service as a swift-service-lifecycle service: graceful shutdown ends the
/// run loop, which ends tasks, stops audio and closes gpsd.
struct RunService: Service {
    let service: KeepAliveService
    let output: Output

    func run() async throws {
        let (commands, send) = AsyncStream.makeStream(of: ApplicationCommand.self)
        let signals = Task {
            for await signal in await UnixSignalsSequence(trapping: .sigusr1, .sigusr2) {
                send.yield(signal == .sigusr1 ? .enterBackground : .enterForeground)
            }
        }
        await withGracefulShutdownHandler {
            await service.run(commands: commands) { output.write($0) }
        } onGracefulShutdown: {
            send.finish()
        }
        signals.cancel()
    }
}
