/// What a simulated run showed. Times are seconds after the app first entered the background.
public struct SimulationReport: Sendable, Hashable, Codable {
    /// One suspension of the app.
    public struct Suspension: Sendable, Hashable, Codable {
        /// Seconds after the app first entered the background.
        public var at: Double
        /// Why (a ``SuspensionCause`` raw value).
        public var cause: String
    }

    /// The strategy simulated (a ``KeepAliveStrategyKind`` raw value).
    public var strategy: String
    /// The execution profile's name (ios13, ios12, unlimited, custom...).
    public var profile: String
    /// The location authorization at the start.
    public var authorization: String
    /// How long was simulated, in seconds.
    public var durationSeconds: Double
    /// Never suspended or killed while in the background.
    public var survived: Bool
    /// When it was first suspended, if it was.
    public var suspendedAt: Double?
    /// When it was killed, if it was.
    public var terminatedAt: Double?
    /// Why it was killed.
    public var terminationReason: String?
    /// Seconds spent in the background with the app's code running.
    public var backgroundAliveSeconds: Double
    /// One-shot location requests made.
    public var locationPolls: Int
    /// Fixes those requests got.
    public var locationFixes: Int
    /// Silent audio pulses played.
    public var audioPulses: Int
    /// Seconds of silent audio played, pulses and loops.
    public var audioSeconds: Double
    /// Times the app's code ran in the background (timers, expiration handlers, location events).
    public var wakeups: Int
    /// Location events of the monitoring strategy's conditions (each woke the app).
    public var locationEvents: Int = 0
    /// Every suspension, in order.
    public var suspensions: [Suspension]
    /// Errors and decisions the strategy noted ("play failed: ...").
    public var notes: [String]
    /// Every event with its time, when asked for.
    public var trace: [String]?
    /// States, tasks, polls and pulses as spans, when asked for (``Simulator/recordsTimeline``).
    public var timeline: SimulationTimeline? = nil

    private enum CodingKeys: String, CodingKey {
        case strategy, profile, authorization, durationSeconds, survived, suspendedAt, terminatedAt
        case terminationReason, backgroundAliveSeconds, locationPolls, locationFixes, audioPulses, audioSeconds
        case wakeups, locationEvents, suspensions, notes, trace, timeline
    }

    /// Writes every key, absent times as `null`, so consumers need not guess.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(strategy, forKey: .strategy)
        try container.encode(profile, forKey: .profile)
        try container.encode(authorization, forKey: .authorization)
        try container.encode(durationSeconds, forKey: .durationSeconds)
        try container.encode(survived, forKey: .survived)
        try container.encode(suspendedAt, forKey: .suspendedAt)
        try container.encode(terminatedAt, forKey: .terminatedAt)
        try container.encode(terminationReason, forKey: .terminationReason)
        try container.encode(backgroundAliveSeconds, forKey: .backgroundAliveSeconds)
        try container.encode(locationPolls, forKey: .locationPolls)
        try container.encode(locationFixes, forKey: .locationFixes)
        try container.encode(audioPulses, forKey: .audioPulses)
        try container.encode(audioSeconds, forKey: .audioSeconds)
        try container.encode(wakeups, forKey: .wakeups)
        try container.encode(locationEvents, forKey: .locationEvents)
        try container.encode(suspensions, forKey: .suspensions)
        try container.encode(notes, forKey: .notes)
        try container.encodeIfPresent(trace, forKey: .trace)
        try container.encodeIfPresent(timeline, forKey: .timeline)
    }
}
