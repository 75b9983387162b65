import KeepAliveCore

/// What happened when, in one simulation: the app's states, its background tasks, location
/// activity and audio playback as spans, and the script's events as marks. Times are seconds
/// since launch. ``svg(title:)`` draws it.
public struct SimulationTimeline: Sendable, Hashable, Codable {
    /// Something that lasted: from `start` to `end` seconds.
    public struct Span: Sendable, Hashable, Codable {
        /// Seconds since launch.
        public var start: Double
        /// Seconds since launch.
        public var end: Double
        /// What it was: a state, a task's name, `location`, `audio`.
        public var label: String
    }

    /// Something that happened at once.
    public struct Mark: Sendable, Hashable, Codable {
        /// Seconds since launch.
        public var at: Double
        /// The script's action, as written (`auth when-in-use`, `gps down`).
        public var label: String
    }

    /// The simulated time, in seconds.
    public var duration: Double
    /// active, inactive, background, suspended, not running.
    public var states: [Span] = []
    /// Background tasks, from begin to end or expiry.
    public var backgroundTasks: [Span] = []
    /// Location activity: a poll from request to fix, or a continuous watch.
    public var location: [Span] = []
    /// Audio playing: a silent pulse, or a loop.
    public var audio: [Span] = []
    /// The script's events: lifecycle commands, authorization changes, gps, power and network.
    public var script: [Mark] = []
    /// The monitoring strategy's location events (`middle satisfied`), each a wake-up.
    public var locationEvents: [Mark] = []

    /// An empty timeline of `duration` seconds.
    public init(duration: Double) { self.duration = duration }
}

/// Builds a ``SimulationTimeline`` from the application's events and activity as they come.
final class SimulationTimelineRecorder {
    private(set) var timeline: SimulationTimeline
    private var state: (since: Double, label: String)?
    private var openTasks: [BackgroundTaskIdentifier: (since: Double, name: String)] = [:]
    private var locationSince: Double?
    private var audioSince: Double?

    init(duration: Double) { timeline = SimulationTimeline(duration: duration) }

    func note(_ event: AppEvent, at time: Double) {
        let label: String? =
            switch event {
            case .didBecomeActive: "active"
            case .willResignActive, .willEnterForeground: "inactive"
            case .didEnterBackground, .resumed: "background"
            case .suspended: "suspended"
            case .terminated: "not running"
            default: nil
            }
        guard let label, label != state?.label else { return }
        closeState(at: time)
        state = (time, label)
    }

    func note(_ activity: ApplicationActivity, at time: Double) {
        switch activity {
        case .backgroundTaskBegan(let identifier, let name):
            openTasks[identifier] = (time, name)
        case .backgroundTaskEnded(let identifier):
            guard let task = openTasks.removeValue(forKey: identifier) else { return }
            timeline.backgroundTasks.append(.init(start: task.since, end: time, label: task.name))
        case .locationActivity(true):
            locationSince = locationSince ?? time
        case .locationActivity(false):
            if let since = locationSince { timeline.location.append(.init(start: since, end: time, label: "location")) }
            locationSince = nil
        case .audioPlayback(true):
            audioSince = audioSince ?? time
        case .audioPlayback(false):
            if let since = audioSince { timeline.audio.append(.init(start: since, end: time, label: "audio")) }
            audioSince = nil
        case .scheduledRequestSubmitted, .scheduledTaskCompleted:
            break
        }
    }

    func note(locationEvent label: String, at time: Double) {
        timeline.locationEvents.append(.init(at: time, label: label))
    }

    func note(script action: SimulationScript.Action, at time: Double) {
        timeline.script.append(.init(at: time, label: action.description))
    }

    /// Closes what is still open at the end of the simulation.
    func finish(at end: Double) -> SimulationTimeline {
        closeState(at: end)
        for task in openTasks.values.sorted(by: { $0.since < $1.since }) {
            timeline.backgroundTasks.append(.init(start: task.since, end: end, label: task.name))
        }
        openTasks = [:]
        if let since = locationSince { timeline.location.append(.init(start: since, end: end, label: "location")) }
        if let since = audioSince { timeline.audio.append(.init(start: since, end: end, label: "audio")) }
        locationSince = nil
        audioSince = nil
        timeline.backgroundTasks.sort { $0.start < $1.start }
        return timeline
    }

    private func closeState(at time: Double) {
        guard let state else { return }
        timeline.states.append(.init(start: state.since, end: time, label: state.label))
        self.state = nil
    }
}
