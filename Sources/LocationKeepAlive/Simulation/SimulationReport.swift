/// What a simulated run showed. Times are seconds after the app first entered the background.
public struct SimulationReport: Sendable, Hashable, Codable {
    public struct Suspension: Sendable, Hashable, Codable {
        public var at: Double
        public var cause: String
    }

    public var strategy: String
    public var profile: String
    public var authorization: String
    public var durationSeconds: Double
    /// Never suspended or killed while in the background.
    public var survived: Bool
    public var suspendedAt: Double?
    public var terminatedAt: Double?
    public var terminationReason: String?
    /// Seconds spent in the background with the app's code running.
    public var backgroundAliveSeconds: Double
    public var locationPolls: Int
    public var locationFixes: Int
    public var audioPulses: Int
    public var audioSeconds: Double
    /// Times the app's code ran in the background (timers, expiration handlers).
    public var wakeups: Int
    public var suspensions: [Suspension]
    /// Errors and decisions the strategy noted ("play failed: ...").
    public var notes: [String]
    /// Every event with its time, when asked for.
    public var trace: [String]?

    private enum CodingKeys: String, CodingKey {
        case strategy, profile, authorization, durationSeconds, survived, suspendedAt, terminatedAt
        case terminationReason, backgroundAliveSeconds, locationPolls, locationFixes, audioPulses, audioSeconds
        case wakeups, suspensions, notes, trace
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
        try container.encode(suspensions, forKey: .suspensions)
        try container.encode(notes, forKey: .notes)
        try container.encodeIfPresent(trace, forKey: .trace)
    }
}
