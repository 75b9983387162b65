import FoundationEssentials
import Logging

/// Runs a keep-alive strategy against the execution model in virtual time: no gpsd, no sound
/// card, 24 hours in milliseconds.
public struct Simulator {
    public var profile: ExecutionProfile
    public var authorization: LocationAuthorization
    public var strategy: KeepAliveStrategyKind
    public var duration: Duration
    public var script: SimulationScript
    public var backgroundModes: BackgroundModes
    /// How long a location request takes to get a fix.
    public var locationLatency: Duration
    /// Fixes handed out in turn (from a replayed NMEA log); a fixed position when empty.
    public var fixes: [Location]
    public var recordsTrace: Bool
    /// The hybrid driver's options (interval, pulse length...).
    public var hybridOptions: HybridKeepAliveMachine.Options

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
        hybridOptions: HybridKeepAliveMachine.Options = .init()
    ) {
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
        let context = KeepAliveContext(app: app, audio: audio, location: location) { note in
            notes.append(note)
            record(note)
        }
        let strategyObject = strategy.make(context, hybridOptions: hybridOptions)

        app.launch()
        for event in script.events where event.time <= duration {
            app.advance(to: event.time)
            record("script: \(event.action)")
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
            trace: recordsTrace ? trace : nil
        )
    }
}
