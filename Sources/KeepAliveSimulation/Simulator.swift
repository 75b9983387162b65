import FoundationEssentials
import Logging
public import KeepAliveCore
public import KeepAliveMonitoring

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
    /// The monitoring strategy's conditions, by identifier. The system watches them for the
    /// app over ``fixes`` played as a track at their own times from launch, and wakes the app
    /// for each event (the profile's event budget): with location always, or when in use
    /// while the app is in the foreground, as the host does.
    public var conditions: [String: MonitorCondition] = [:]
    /// The state the conditions start in (`.unsatisfied`: no event until entered).
    public var conditionsAssume: MonitorState = .unknown
    /// How often location events may wake the app (`keepalive host --event-wakes`): a wake
    /// its budget does not allow waits for the next one it does, as under the host.
    public var eventWakes: WakeBudget = .events

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

        // The monitoring strategy: the system's monitor sees the track and wakes the app.
        let monitor = strategy == .monitoring ? makeMonitor(notes: &notes) : nil
        let service = monitor.map {
            SimulatedLocationService(app: app, monitor: $0, eventWakes: eventWakes, record: record, timeline: timeline)
        }
        var track = monitor == nil ? [] : Self.track(fixes)
        track.removeAll { $0.time > duration }

        app.launch()
        var nextFix = track.startIndex
        func playTrack(until time: Duration, including: Bool) {
            while nextFix < track.endIndex, track[nextFix].time < time || (including && track[nextFix].time == time) {
                let (at, fix) = track[nextFix]
                nextFix += 1
                service?.serveWaitingWakes(until: at, including: false)
                app.advance(to: at)
                service?.fixArrived(fix)
            }
            service?.serveWaitingWakes(until: time, including: including)
        }
        for event in script.events where event.time <= duration {
            playTrack(until: event.time, including: false)
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
        playTrack(until: duration, including: true)
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
            locationEvents: service?.events ?? 0,
            suspensions: statistics.suspensions.map { .init(at: relative($0.at), cause: $0.cause.rawValue) },
            notes: notes,
            trace: recordsTrace ? trace : nil,
            timeline: timeline?.finish(at: duration.seconds)
        )
    }

    /// The conditions in a monitor; a bad one is a note, and the monitor goes on without it.
    private func makeMonitor(notes: inout [String]) -> LocationMonitor? {
        guard let monitor = try? LocationMonitor(named: "simulation") else { return nil }
        for (identifier, condition) in conditions.sorted(by: { $0.key < $1.key }) {
            do {
                try monitor.add(condition, identifier: identifier, assuming: conditionsAssume)
            } catch {
                notes.append("condition \(identifier) not monitored: \(error.message)")
            }
        }
        return monitor
    }

    /// The fixes as a track from launch: each at its time after the first timed one (a fix
    /// without a time a second after the one before).
    static func track(_ fixes: [Location]) -> [(time: Duration, fix: Location)] {
        let origin = fixes.lazy.compactMap(\.timestamp).first
        var last = Duration.zero
        return fixes.enumerated().map { index, fix in
            if let time = fix.timestamp, let origin {
                last = max(last, .milliseconds(Int64((time.timeIntervalSince(origin) * 1000).rounded())))
            } else if index > 0 {
                last += .seconds(1)
            }
            return (last, fix)
        }
    }
}
