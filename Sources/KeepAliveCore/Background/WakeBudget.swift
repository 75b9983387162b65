/// How often an app may be woken for what is not its user's doing, on the host's clock: at
/// most `burst` wakes at once, then one more each `interval` (a generic cell rate: the
/// budget refills as time passes, never beyond `burst`).
///
/// The host keeps two per app, anchored on iOS. **Data** on a socket the app named is a
/// background push, and Apple's "Pushing background updates to your app" asks for no more
/// than two or three an hour: two at once (a command and its follow-up), then one each 20
/// minutes. **Events** (a location event
/// or a scheduled task that wakes a suspended app, or launches one that exited) come as the
/// world gives them: ten at once, one more each 6 minutes. Each wake runs for the event
/// budget (about 10 s), as on iOS; a wake the budget does not allow waits for the next one it
/// does, and the host says so.
public struct WakeBudget: Sendable, Hashable {
    /// Wakes at once.
    public var burst: Int
    /// One more wake each.
    public var interval: Duration
    /// The time the next wake would be due at the sustained rate (the cell rate's
    /// "theoretical arrival"); wakes are allowed until `burst - 1` intervals before it.
    private var due: Duration = .zero

    /// At most `burst` wakes at once, one more each `interval`.
    public init(burst: Int, interval: Duration) {
        self.burst = max(1, burst)
        self.interval = interval
    }

    /// Pushes: two at once, three an hour.
    public static let data = WakeBudget(burst: 2, interval: .seconds(20 * 60))
    /// Location events and scheduled tasks: ten at once, ten an hour.
    public static let events = WakeBudget(burst: 10, interval: .seconds(6 * 60))

    /// `BURST/INTERVAL`, as `keepalive host --data-wakes 2/20m` takes it.
    public init?(parsing text: String) {
        let parts = text.split(separator: "/")
        guard parts.count == 2, let burst = Int(parts[0]), burst >= 1, let interval = Duration(parsing: String(parts[1])),
            interval > .zero
        else { return nil }
        self.init(burst: burst, interval: interval)
    }

    /// The first time from `now` on a wake is allowed.
    public func nextWake(from now: Duration) -> Duration {
        max(now, due - interval * (burst - 1))
    }

    /// Whether a wake is allowed at `now`.
    public func allows(at now: Duration) -> Bool { nextWake(from: now) <= now }

    /// Counts a wake at `time` (now, or a wake planned later).
    public mutating func spend(at time: Duration) {
        due = max(due, time) + interval
    }

    /// Wakes allowed at `now`.
    public func remaining(at now: Duration) -> Int {
        let ahead = due - now
        guard ahead > .zero else { return burst }
        let used = Int((ahead / interval).rounded(.up))
        return max(0, burst - used)
    }
}
