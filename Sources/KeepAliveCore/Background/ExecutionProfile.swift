/// The host's rules for background execution: how long a background task may run, and what
/// the documents leave open, as named parameters.
public struct ExecutionProfile: Sendable, Hashable, Codable {
    /// How renewing a background task (ending the last one and beginning another) counts.
    public enum Renewal: String, Sendable, Hashable, Codable {
        /// One budget per background entry, shared by every task: renewing gains nothing (iOS 13 and later).
        case sharedPerBackgroundEntry
        /// A task begun when none is open gets a fresh budget (what renewal hacks hope for).
        case resetsBudget
    }

    /// Its name on the command line (`ios13`, `ios7`, ...).
    public var name: String
    /// Time a background entry gets from background tasks; `nil` never suspends (a plain daemon).
    public var backgroundBudget: Duration?
    /// Expiration handlers run this long before the budget ends.
    public var expirationLeadTime: Duration
    /// What renews the budget.
    public var renewal: Renewal
    /// After audio stops, the app keeps running this long (the host is slow to notice silence).
    public var audioGrace: Duration
    /// After a location request completes, the app keeps running this long (with "always").
    public var locationGrace: Duration
    /// After entering the background, the app runs this long even with nothing keeping it
    /// alive (Android and Ubuntu Touch freeze an app a fixed time after it leaves the screen).
    public var backgroundEntryGrace: Duration
    /// How long a scheduled refresh task may run (BGAppRefreshTask: about 30 s).
    public var refreshBudget: Duration = .seconds(30)
    /// The longest a scheduled processing task may run while its conditions hold.
    public var processingCap: Duration = .seconds(600)
    /// How long an app woken or launched for a location event (a region, a significant change,
    /// a visit) runs before the policy applies again: about 10 s, as iOS gives.
    public var eventBudget: Duration = .seconds(10)

    /// A profile with these rules.
    public init(
        name: String,
        backgroundBudget: Duration?,
        expirationLeadTime: Duration = .seconds(1),
        renewal: Renewal = .sharedPerBackgroundEntry,
        audioGrace: Duration = .seconds(10),
        locationGrace: Duration = .seconds(10),
        backgroundEntryGrace: Duration = .zero
    ) {
        self.name = name
        self.backgroundBudget = backgroundBudget
        self.expirationLeadTime = expirationLeadTime
        self.renewal = renewal
        self.audioGrace = audioGrace
        self.locationGrace = locationGrace
        self.backgroundEntryGrace = backgroundEntryGrace
    }

    /// iOS 13 and later: about 30 s per background entry (measured 31 s).
    public static let ios13 = ExecutionProfile(name: "ios13", backgroundBudget: .seconds(30))
    /// Before iOS 13: about 180 s (measured 175 s).
    public static let ios12 = ExecutionProfile(name: "ios12", backgroundBudget: .seconds(180))
    /// A plain Linux daemon: nothing is ever suspended.
    public static let unlimited = ExecutionProfile(name: "unlimited", backgroundBudget: nil)

    /// Like Android: a background app is frozen about 10 s after it leaves the screen; audio
    /// and location (its foreground services) keep it running.
    public static let android = ExecutionProfile(
        name: "android",
        backgroundBudget: .seconds(10),
        backgroundEntryGrace: .seconds(10)
    )
    /// Like Ubuntu Touch: stopped about 1.5 s after the app loses focus.
    public static let ubuntuTouch = ExecutionProfile(
        name: "ubuntu-touch",
        backgroundBudget: .milliseconds(1500),
        expirationLeadTime: .milliseconds(500),
        backgroundEntryGrace: .milliseconds(1500)
    )

    /// Every named profile.
    public static let all = [ios13, ios12, android, ubuntuTouch, unlimited]

    /// `ios13`, `ios12`, `android`, `ubuntu-touch` or `unlimited`.
    public static func named(_ name: String) -> ExecutionProfile? {
        all.first { $0.name == name }
    }

    /// Whether this profile ever suspends an app.
    public var suspends: Bool { backgroundBudget != nil }
}
