public import KeepAliveCore

/// What the rules wake a sleeping device for, as iOS wakes a suspended app.
public enum WakeKind: String, Sendable, Hashable, CaseIterable, Codable {
    /// A scheduled refresh or processing task, at its earliest begin date.
    case refresh
    /// The monitoring strategy's check of its regions and significant change.
    case monitoring
    /// The hybrid's location poll, when authorized always.
    case poll

    /// How often each kind may wake the device by default, anchored on iOS and Android: a
    /// refresh task at most once each 15 minutes (iOS's own floor for background refresh);
    /// a monitoring check once each 5 minutes (iOS's significant-change rate, and a region
    /// crossing is found within one period plus the time to a fix); the hybrid's poll once
    /// each 10 minutes (asleep, a poll every 10 s would keep the device awake: Android's
    /// Doze lets an app's alarm fire at most once each 9 minutes). Each with a burst of 1.
    public var defaultBudget: WakeBudget {
        switch self {
        case .refresh: WakeBudget(burst: 1, interval: .seconds(15 * 60))
        case .monitoring: WakeBudget(burst: 1, interval: .seconds(5 * 60))
        case .poll: WakeBudget(burst: 1, interval: .seconds(10 * 60))
        }
    }

    /// ``defaultBudget`` for each kind.
    public static var defaultBudgets: [WakeKind: WakeBudget] {
        Dictionary(uniqueKeysWithValues: allCases.map { ($0, $0.defaultBudget) })
    }
}

/// The user's session on the device's seat, as logind says.
public enum SessionState: String, Sendable, Hashable, Codable {
    /// A session is in front of the user and not locked.
    case active
    /// The user's session is locked, or not in front (another session, the greeter).
    case inactive
    /// No session at all: a headless board; the model's rules alone decide.
    case none
}
