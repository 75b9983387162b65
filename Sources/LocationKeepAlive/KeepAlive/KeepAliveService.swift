import FoundationEssentials
public import Logging

/// The keep-alive service: an application model on the real clock, a keep-alive strategy
/// (hybrid by default) with real silent audio and gpsd polls, a foreground location watch,
/// and the authorization store, reporting everything as events.
public struct KeepAliveService: Sendable {
    public struct Configuration: Sendable {
        public var profile: ExecutionProfile = .unlimited
        public var backgroundModes: BackgroundModes = [.audio, .location]
        public var strategy: KeepAliveStrategyKind = .hybrid
        public var hybrid = HybridKeepAliveMachine.Options()
        public var audio: SilentAudioPlayer.Output = .alsa(device: "default")
        /// Keep the audio device open and prepared between pulses (instead of drain and close).
        public var keepsAudioDeviceOpen = false
        public var startsInBackground = false
        public var isLowPower: @Sendable () -> Bool = { PowerSupply.isLowPower() }
        /// Run as an app of `keepalive host` (connected, `hello` said): its rules are the
        /// host's, and what the app does is reported to it.
        public var host: (client: HostClient, app: String)?

        public init() {}
    }

    /// Something the service did, for its output.
    public enum Event: Sendable {
        case started(profile: String, strategy: String, authorization: LocationAuthorization)
        case lifecycle(AppEvent)
        case decision(String)
        case poll(Result<Location, LocationError>)
        case pulse(length: Duration, device: String, error: String?)
        case fix(Location)
        case status(LocationStatus)
        case authorizationChanged(LocationAuthorization)
        case callback
        case error(String)
        case stopped
    }

    public let configuration: Configuration
    public let locationManager: LocationManager
    public let authorization: LocationAuthorizationManager?
    let logger: Logger

    public init(
        configuration: Configuration,
        locationManager: LocationManager,
        authorization: LocationAuthorizationManager?,
        logger: Logger = Logger(label: "LocationKeepAlive.service")
    ) {
        self.configuration = configuration
        self.locationManager = locationManager
        self.authorization = authorization
        self.logger = logger
    }

    /// Runs until `commands` ends (graceful shutdown), then ends tasks, stops audio and closes gpsd.
    public func run(
        commands external: AsyncStream<ApplicationCommand>,
        emit: @escaping @Sendable (Event) -> Void
    ) async {
        let (commands, post) = AsyncStream.makeStream(of: ApplicationCommand.self)
        let forwarder = Task {
            for await command in external { post.yield(command) }
            post.finish()
        }
        let status = authorization?.status ?? .always
        let app = Application(
            profile: configuration.profile,
            backgroundModes: configuration.backgroundModes,
            authorization: status,
            logger: logger
        )
        let player = SilentAudioPlayer(output: configuration.audio, keepsDeviceOpen: configuration.keepsAudioDeviceOpen)
        let audio = ServiceAudioOutput(app: app, player: player) { post.yield($0) }
        let location = ServiceLocationProvider(app: app, manager: locationManager) { post.yield($0) }
        let context = KeepAliveContext(app: app, audio: audio, location: location) { note in emit(.decision(note)) }
        let strategy = configuration.strategy.make(
            context,
            hybridOptions: configuration.hybrid,
            isLowPower: configuration.isLowPower
        )
        (strategy as? HybridKeepAlive)?.onCallback = { emit(.callback) }
        let hostLink = configuration.host.map { HostLink(client: $0.client, app: $0.app) }
        hostLink?.report(app)
        let hostNotices = hostLink?.follow(
            post: { post.yield($0) },
            prepareForSuspension: { [locationManager] in
                await player.stopLoop()
                locationManager.closeSessionForSuspension()
            },
            resumed: { [locationManager] in locationManager.resumeAfterSuspension() },
            note: { emit(.decision($0)) }
        )

        // The app's own foreground work: a location watch while active.
        var watch: Task<Void, Never>?
        let manager = locationManager
        app.addObserver { event in
            emit(.lifecycle(event))
            manager.applicationState = app.state
            switch event {
            case .didBecomeActive:
                watch?.cancel()
                watch = Task {
                    do {
                        for try await update in manager.updates() {
                            switch update {
                            case .location(let fix): emit(.fix(fix))
                            case .status(let status): emit(.status(status))
                            }
                        }
                    } catch {
                        emit(.error("\(error)"))
                    }
                }
            case .didEnterBackground, .willTerminate, .terminated:
                watch?.cancel()
                watch = nil
            default: break
            }
        }
        let authorizationWatch = authorization.map { authorization in
            let changes = authorization.changes()
            return Task {
                for await snapshot in changes {
                    emit(.authorizationChanged(snapshot.status))
                    post.yield(.setAuthorization(snapshot.status))
                }
            }
        }

        emit(
            .started(
                profile: configuration.profile.name,
                strategy: configuration.strategy.rawValue,
                authorization: status
            )
        )
        app.launch()
        if configuration.startsInBackground { app.enterBackground() }
        await ApplicationRunLoop(clock: ContinuousClock()).run(app, commands: commands) { completion in
            switch completion {
            case .audioPulse(let id, let error):
                emit(.pulse(length: configuration.hybrid.pulseLength, device: player.output.description, error: error))
                audio.finished(id, error: error)
            case .locationRequest(let id, let result):
                emit(.poll(result))
                location.finished(id, result: result)
            }
        }
        // Graceful stop: end tasks and timers, stop audio and location, close gpsd.
        app.terminate()
        watch?.cancel()
        authorizationWatch?.cancel()
        hostNotices?.cancel()
        forwarder.cancel()
        audio.stopLoop()
        location.stopUpdates()
        await player.stopLoop()
        withExtendedLifetime(strategy) {}
        emit(.stopped)
    }
}
