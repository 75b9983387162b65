import FoundationEssentials
public import Logging
public import KeepAliveAudio
public import KeepAliveCore
public import KeepAliveHost
public import KeepAliveMonitoring

/// The keep-alive service: an application model on the real clock, a keep-alive strategy
/// (hybrid by default) with real silent audio and gpsd polls, a foreground location watch,
/// and the authorization store, reporting everything as events.
public struct KeepAliveService: Sendable {
    /// What the service runs, and with what.
    public struct Configuration: Sendable {
        /// The execution rules: `unlimited` (a plain Linux daemon) unless a host or a policy says otherwise.
        public var profile: ExecutionProfile = .unlimited
        /// The background modes the app declares (audio and location keep it alive only if declared).
        public var backgroundModes: BackgroundModes = [.audio, .location]
        /// The keep-alive strategy.
        public var strategy: KeepAliveStrategyKind = .hybrid
        /// The hybrid driver's interval, pulse length and call-back interval.
        public var hybrid = HybridKeepAliveMachine.Options()
        /// Where silent audio goes: an ALSA device, or a WAV file.
        public var audio: SilentAudioPlayer.Output = .alsa(device: "default")
        /// Keep the audio device open and prepared between pulses (instead of drain and close).
        public var keepsAudioDeviceOpen = false
        /// Enter the background right after launch.
        public var startsInBackground = false
        /// Whether the machine runs low on battery (the call-back interval stretches then).
        public var isLowPower: @Sendable () -> Bool = { PowerSupply.isLowPower() }
        /// Run as an app of `keepalive host` (connected, `hello` said): its rules are the
        /// host's, and what the app does is reported to it.
        public var host: (client: HostClient, app: String)?
        /// Every fix the service delivers (watched or polled) is recorded here: a `FixJournal`
        /// keeps them durably.
        public var journal: (any FixRecorder)?
        /// The conditions of the ``KeepAliveStrategyKind/monitoring`` strategy, and who watches them.
        public var monitoring: ServiceMonitoring?
        /// Every location event of the monitoring strategy is recorded here, after the fix that
        /// decided it: a `FixJournal` keeps them in order with the fixes.
        public var eventRecorder: (any MonitorEventRecorder)?
        /// Runs beside the service, paused while the host freezes the app: a `JournalDelivery`
        /// delivers the journal to tracking servers (and `keepalive upload` takes over while paused).
        public var delivery: (any PausableWork)?
        /// How long a stop waits for ``delivery`` to send what waits before it exits (and a
        /// pause before the host freezes the app, at most the host's own deadline).
        public var stopTimeout: Duration = .seconds(5)
        /// What the monitoring strategy journals: OwnTracks' quiet, manual, significant and move
        /// modes (`nil`: every fix of its watch).
        public var reportingMode: ReportingMode?
        /// Takes commands from a server (an OwnTracks destination's `cmd` topic) for as long as
        /// the service runs.
        public var remote: (any RemoteControl)?
        /// Counts fixes, polls, pulses, reconnections, suspensions and the delivery queue through
        /// swift-metrics, as `keepalive_*` metrics (listed in the command-line tool article);
        /// bootstrap a backend to read them.
        public var recordsMetrics = false

        /// The defaults: unlimited rules, hybrid strategy, ALSA's default device.
        public init() {}
    }

    /// Something the service did, for its output.
    public enum Event: Sendable {
        /// Running, with these rules, strategy and authorization.
        case started(profile: String, strategy: String, authorization: LocationAuthorization)
        /// The application model's lifecycle: launched, background, suspended...
        case lifecycle(AppEvent)
        /// What the strategy decided, and why.
        case decision(String)
        /// A background location poll's result.
        case poll(Result<Location, LocationError>)
        /// A silent pulse played (or failed: `error`).
        case pulse(length: Duration, device: String, error: String?)
        /// A fix from the foreground watch (or the monitoring strategy's own watch).
        case fix(Location)
        /// A condition of the monitoring strategy changed state: a region entered or left, a
        /// significant change, a visit begun or ended. The app was woken for it.
        case locationEvent(MonitorEvent)
        /// The location source's status: connected, lost, reconnecting...
        case status(LocationStatus)
        /// The authorization changed (another process, a prompt, a grant running out).
        case authorizationChanged(LocationAuthorization)
        /// The hybrid driver's periodic client call-back.
        case callback
        /// Something failed and the service goes on.
        case error(String)
        /// Stopped gracefully.
        case stopped
    }

    /// What the service runs.
    public let configuration: Configuration
    /// Where its fixes come from.
    public let locationManager: LocationManager
    /// The app's authorization, followed and enforced; `nil` behaves as always.
    public let authorization: LocationAuthorizationManager?
    let logger: Logger

    /// A service, not yet running (see ``run(commands:turned:emit:)``).
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
    ///
    /// - Parameters:
    ///   - external: lifecycle changes from outside (signals, a host); the end of the stream stops it.
    ///   - turned: called after each turn of the application's run loop, in its isolation (a
    ///     watchdog's proof that the loop is not stuck: see ``ApplicationCommand/heartbeat``).
    ///   - output: everything the service does, as it happens.
    public func run(
        commands external: AsyncStream<ApplicationCommand>,
        turned: () -> Void = {},
        emit output: @escaping @Sendable (Event) -> Void
    ) async {
        let metrics = configuration.recordsMetrics ? ServiceMetrics() : nil
        let emit: @Sendable (Event) -> Void = { event in
            metrics?.record(event)
            output(event)
        }
        let (commands, post) = AsyncStream.makeStream(of: ApplicationCommand.self)
        let forwarder = Task {
            for await command in external { post.yield(command) }
            post.finish()
        }
        let status = authorization?.status ?? .always
        let journal = configuration.journal
        let record: @Sendable (Location) -> Void = { fix in
            guard let journal else { return }
            do { try journal.record(fix) } catch { emit(.error("\(error)")) }
        }
        let eventRecorder = configuration.eventRecorder
        let hostLink = configuration.host.map { HostLink(client: $0.client, app: $0.app) }
        let monitoring = configuration.strategy == .monitoring ? configuration.monitoring : nil
        // Standalone, the service's own monitor is the app's one watch, foreground or not.
        let ownMonitor = hostLink == nil ? monitoring?.monitor : nil
        let conditions = monitoring.map {
            ServiceConditions($0, mode: configuration.reportingMode, ownMonitor: ownMonitor, host: hostLink?.client)
        }
        // An event: journaled after its fix, told, and the app woken for the event budget.
        let handle: @Sendable (MonitorEvent) -> Void = { event in
            if conditions?.journalsWithEvent(event.location) ?? true { record(event.location) }
            if let eventRecorder {
                do { try eventRecorder.record(event) } catch { emit(.error("\(error)")) }
            }
            emit(.locationEvent(event))
            post.yield(.wakeForLocationEvent)
        }
        let delivery = configuration.delivery
        let deliveryTask = delivery.map { delivery in Task { await delivery.run() } }
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
        hostLink?.report(app)
        let hostNotices = hostLink?.follow(
            post: { post.yield($0) },
            prepareForSuspension: { [locationManager, remote = configuration.remote] deadline in
                await player.stopLoop()
                locationManager.closeSessionForSuspension()
                let bound = min(configuration.stopTimeout, ContinuousClock.now.duration(to: deadline ?? .now + configuration.stopTimeout))
                await delivery?.pause(within: max(.zero, bound))
                // A command for the frozen app wakes it, as a push does.
                if let hostLink, let sockets = remote?.commandSockets, !sockets.isEmpty {
                    do {
                        try await hostLink.client.wakeOnData(from: sockets)
                    } catch {
                        emit(.error("commands wait for the next wake: the host cannot watch their socket (\(error))"))
                    }
                }
            },
            resumed: { [locationManager] in
                locationManager.resumeAfterSuspension()
                delivery?.resume()
            },
            locationEvent: handle,
            note: { emit(.decision($0)) }
        )
        let registration = hostLink.flatMap { _ in
            conditions.map { conditions in
                Task {
                    do {
                        try await conditions.apply()
                        emit(.decision("host: watching \(conditions.monitoring.conditions.count) conditions for the app"))
                    } catch {
                        emit(.error("the host did not take the conditions: \(error)"))
                    }
                }
            }
        }

        let remoteTask = configuration.remote.map { remote in
            let device = remoteDevice(conditions: conditions, record: record, emit: emit) { post.yield($0) }
            return Task { await remote.run(controlling: device) }
        }

        // The app's own foreground work: a location watch while active.
        var watch: Task<Void, Never>?
        let manager = locationManager
        app.addObserver { event in
            emit(.lifecycle(event))
            manager.applicationState = app.state
            switch event {
            case .didBecomeActive where ownMonitor == nil:
                watch?.cancel()
                watch = Task {
                    do {
                        for try await update in manager.updates() {
                            switch update {
                            case .location(let fix):
                                if conditions?.journals(fix) ?? true { record(fix) }  // as the mode says
                                emit(.fix(fix))
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
        let monitorWatch = ownMonitor.map { monitor in
            Task { [locationManager] in
                do {
                    if configuration.reportingMode != nil { try await conditions?.apply() }
                    try await monitor.monitor(locationManager, pausing: monitoring?.pause, handler: handle) { fix in
                        if conditions?.journals(fix) ?? true { record(fix) }
                        emit(.fix(fix))
                    }
                } catch {
                    emit(.error("monitoring: \(error)"))
                }
            }
        }
        app.launch()
        if configuration.startsInBackground { app.enterBackground() }
        await ApplicationRunLoop(clock: DispatchClock()).run(
            app,
            commands: commands,
            deliver: { completion in
                switch completion {
                case .audioPulse(let id, let error):
                    emit(.pulse(length: configuration.hybrid.pulseLength, device: player.output.description, error: error))
                    audio.finished(id, error: error)
                case .locationRequest(let id, let result):
                    if case .success(let fix) = result { record(fix) }
                    emit(.poll(result))
                    location.finished(id, result: result)
                }
            },
            afterEachStep: turned
        )
        // Graceful stop: end tasks and timers, stop audio and location, close gpsd.
        app.terminate()
        watch?.cancel()
        authorizationWatch?.cancel()
        hostNotices?.cancel()
        registration?.cancel()
        remoteTask?.cancel()
        await remoteTask?.value
        monitorWatch?.cancel()
        await monitorWatch?.value
        forwarder.cancel()
        audio.stopLoop()
        location.stopUpdates()
        await player.stopLoop()
        await delivery?.finish(within: configuration.stopTimeout)  // the last fixes reach the server before the exit
        deliveryTask?.cancel()
        await deliveryTask?.value
        withExtendedLifetime(strategy) {}
        emit(.stopped)
    }

    /// What a remote command may ask of this service: a fresh fix (journaled and told like a
    /// poll's), and changes of the monitoring strategy's conditions and reporting mode.
    private func remoteDevice(
        conditions: ServiceConditions?,
        record: @escaping @Sendable (Location) -> Void,
        emit: @escaping @Sendable (Event) -> Void,
        post: @escaping @Sendable (ApplicationCommand) -> Void
    ) -> RemoteDevice {
        let notMonitoring = MonitoringError(.invalidCondition, "the service watches no regions: run it with --strategy monitoring")
        return RemoteDevice(
            reportLocation: { [locationManager] in
                // As an app answering a push does: location activity, so the model (and a host)
                // keeps the app running until the fix is taken.
                post(.beginLocationActivity)
                defer { post(.endLocationActivity) }
                // Newer than any fix the manager has seen: a receiver may give its current fix
                // again as a session opens, and the answer must be one taken after the command.
                let fix = try await Self.fix(from: locationManager, newerThan: locationManager.location?.timestamp)
                record(fix)
                conditions?.journaled(fix)
                emit(.poll(.success(fix)))
                return fix
            },
            changeConditions: { removing, adding in
                guard let conditions else { throw notMonitoring }
                try await conditions.change(removing: removing, adding: adding)
            },
            mode: { conditions?.mode },
            setMode: { mode in
                guard let conditions else { throw notMonitoring }
                try await conditions.setMode(mode)
            },
            note: { emit(.decision($0)) }
        )
    }

    /// The first fix of `manager` newer than `seen` (any, without it), within `timeout`.
    private static func fix(from manager: LocationManager, newerThan seen: Date?, timeout: Duration = .seconds(30)) async throws -> Location {
        try await withThrowingTaskGroup(of: Location?.self) { group in
            group.addTask {
                for try await update in manager.updates() {
                    guard case .location(let fix) = update else { continue }
                    if let seen, let time = fix.timestamp, time <= seen { continue }
                    return fix
                }
                return nil
            }
            group.addTask {
                try await DispatchClock().sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let fix = first else {
                throw LocationError(.locationUnknown, "no fix newer than the last one within \(timeout.secondsText)")
            }
            return fix
        }
    }
}
