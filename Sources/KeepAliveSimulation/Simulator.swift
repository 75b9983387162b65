import FoundationEssentials
public import Logging
public import KeepAliveCore

/// Runs a keep-alive strategy against the execution model in virtual time: no gpsd, no sound
/// card, 24 hours in milliseconds.
public struct Simulator {
    /// The execution rules simulated.
    public var profile: ExecutionProfile
    /// The location authorization at the start (a script can change it).
    public var authorization: LocationAuthorization
    /// The keep-alive strategy simulated.
    public var strategy: KeepAliveStrategyKind
    /// How much virtual time to run.
    public var duration: Duration
    /// Lifecycle, authorization and receiver events at times (background at 0 by default).
    public var script: SimulationScript
    /// The background modes the app declares.
    public var backgroundModes: BackgroundModes
    /// How long a location request takes to get a fix.
    public var locationLatency: Duration
    /// Fixes handed out in turn (from a replayed NMEA log); a fixed position when empty.
    public var fixes: [Location]
    /// Whether the report carries every event with its time.
    public var recordsTrace: Bool
    /// Whether the report carries a ``SimulationTimeline`` (for `--plot`).
    public var recordsTimeline: Bool
    /// The hybrid driver's options (interval, pulse length...).
    public var hybridOptions: HybridKeepAliveMachine.Options

    /// A simulation: by default the iOS 13 rules, always authorized, 24 hours in the background.
    public init(
        profile: ExecutionProfile = .ios13,
        authorization: LocationAuthorization = .always,
        strategy: KeepAliveStrategyKind = .backgroundTask,
        duration: Duration = .seconds(86_400),
        script: SimulationScript = .backgroundForever,
        backgroundModes: BackgroundModes = [.audio, .location],
        locationLatency: Duration = .seconds(1),
        fixes: [Location] = [],
        recordsTrace: Bool = false,
        recordsTimeline: Bool = false,
        hybridOptions: HybridKeepAliveMachine.Options = .init()
    ) {
        self.recordsTimeline = recordsTimeline
        self.hybridOptions = hybridOptions
        self.profile = profile
        self.authorization = authorization
        self.strategy = strategy
        self.duration = duration
        self.script = script
        self.backgroundModes = backgroundModes
        self.locationLatency = locationLatency
        self.fixes = fixes
        self.recordsTrace = recordsTrace
    }

    /// Runs the simulation to its end.
    public func run() -> SimulationReport {
        var logger = Logger(label: "LocationKeepAlive.simulator")
        logger.logLevel = .critical
        let app = Application(
            profile: profile,
            backgroundModes: backgroundModes,
            authorization: authorization,
            logger: logger
        )
        var trace: [String] = []
        var notes: [String] = []
        let record: (String) -> Void = { [recordsTrace] line in
            if recordsTrace {
                trace.append(
                    String(repeating: " ", count: max(0, 10 - app.now.seconds.fixed(3).count))
                        + app.now.seconds.fixed(3) + "  " + line
                )
            }
        }
        let audio = SimulatedAudioOutput(app: app)
        let location = SimulatedLocationProvider(app: app, latency: locationLatency, fixes: fixes)
        audio.onChange = record
        location.onChange = record
        app.addObserver { record("\($0)") }
        let timeline = recordsTimeline ? SimulationTimelineRecorder(duration: duration.seconds) : nil
        if let timeline {
            app.addObserver { timeline.note($0, at: app.now.seconds) }
            app.onActivity = { timeline.note($0, at: app.now.seconds) }
        }
        let context = KeepAliveContext(app: app, audio: audio, location: location) { note in
            notes.append(note)
            record(note)
        }
        let strategyObject = strategy.make(context, hybridOptions: hybridOptions)

        app.launch()
        for event in script.events where event.time <= duration {
            app.advance(to: event.time)
            record("script: \(event.action)")
            timeline?.note(script: event.action, at: event.time.seconds)
            switch event.action {
            case .enterBackground: app.enterBackground()
            case .enterForeground: app.enterForeground()
            case .terminate: app.terminate()
            case .authorization(let status): app.authorization = status
            case .gps(let available): location.isAvailable = available
            case .power(let on): app.conditions.hasExternalPower = on
            case .network(let up): app.conditions.hasNetwork = up
            }
        }
        app.advance(to: duration)
        app.finishAccounting()
        audio.finishAccounting()
        withExtendedLifetime(strategyObject) {}

        let statistics = app.statistics
        let origin = statistics.firstBackgroundEntry ?? .zero
        let relative = { (time: Duration) in (time - origin).seconds }
        return SimulationReport(
            strategy: strategy.rawValue,
            profile: profile.name,
            authorization: authorization.rawValue,
            durationSeconds: duration.seconds,
            survived: statistics.suspensions.isEmpty && statistics.termination == nil,
            suspendedAt: statistics.suspensions.first.map { relative($0.at) },
            terminatedAt: statistics.termination.map { relative($0.at) },
            terminationReason: statistics.termination.map { "\($0.reason)" },
            backgroundAliveSeconds: statistics.backgroundRunningTime.seconds,
            locationPolls: location.requests,
            locationFixes: location.fixesDelivered,
            audioPulses: audio.pulses,
            audioSeconds: audio.playedTime.seconds,
            wakeups: statistics.wakeups,
            suspensions: statistics.suspensions.map { .init(at: relative($0.at), cause: $0.cause.rawValue) },
            notes: notes,
            trace: recordsTrace ? trace : nil,
            timeline: timeline?.finish(at: duration.seconds)
        )
    }
}
