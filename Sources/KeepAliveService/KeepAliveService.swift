import FoundationEssentials
public import Logging
public import KeepAliveAudio
public import KeepAliveCore
public import KeepAliveHostProtocol
public import KeepAliveMonitoring
public import KeepAliveSleep

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
        /// Follows the device's sleep through logind by the model's rules (``DeviceSleepKeeper``):
        /// holds it awake only while the app may run in the background for location, prepares
        /// for each sleep (journal committed, delivery, the watch closed), marks the time asleep
        /// as a gap, and wakes the device for the strategy's work as its budget allows. `nil`:
        /// the device's sleep is not followed.
        public var deviceSleep: DeviceSleepKeeper.Configuration?

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
        /// The device's sleep: a lock taken or released, a sleep, a resume, a wake.
        case sleep(SleepNotice)
        /// The receiver's power: switched on or off, a start's time to first fix, a refresh.
        case receiver(ReceiverPowerNote)
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
    /// Every task it starts belongs to one of two task groups: the work (the commands, the
    /// watches, the host's notices, remote commands, the silent loop, the devices' pulses and
    /// fixes), ended when the run loop ends, and delivery, ended after it delivered what waits. Its decisions are
    /// `KeepAliveServiceMachine`'s.
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
        locationManager.receiverPower?.tell { emit(.receiver($0)) }
        let wiring = ServiceWiring(self, post: { post.yield($0) }, emit: emit)
        let app = ServiceApp(self, wiring: wiring)
        emit(.started(profile: configuration.profile.name, strategy: configuration.strategy.rawValue, authorization: app.model.authorization))
        // Said at once, whatever the app's state: in the background nothing may ask for a fix for a while.
        if let problem = authorization?.snapshot.problem { emit(.error(problem.message)) }
        var stop: [KeepAliveServiceMachine.Action] = []
        await withDiscardingTaskGroup { delivering in
            if let delivery = configuration.delivery { delivering.addTask { await delivery.run() } }
            await withDiscardingTaskGroup { work in
                work.addTask {
                    for await command in external { post.yield(command) }
                    post.finish()
                }
                work.addTask { [loopSwitch = app.audio.loopSwitch] in await loopSwitch.run { emit(.error($0)) } }
                work.addTask { [effects = app.effects] in await effects.run() }
                work.addTask { [switches = app.watchSwitches] in await wiring.watchInForeground(switches) }
                wiring.startWork(in: &work, player: app.player)
                await app.run(commands: commands, inBackground: configuration.startsInBackground, turned: turned)
                app.effects.finish()
                // The stop, in the machine's order: the app's end, then the work's (the group
                // waits for each of its tasks as it ends).
                stop = wiring.decide(.stopRequested)
                if stop.contains(.terminateApp) { app.terminate() }
                work.cancelAll()
            }
            for action in stop.drop(while: { $0 != .endWork }) {
                switch action {
                case .stopDevices: await app.stopDevices()
                case .finishDelivery(let bound):
                    await configuration.delivery?.finish(within: bound)  // the last fixes reach the server before the exit
                    delivering.cancelAll()
                default: break
                }
            }
        }
        if stop.contains(.reportStopped) { emit(.stopped) }
    }
}
