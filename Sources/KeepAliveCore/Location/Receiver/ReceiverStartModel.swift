import Glibc

/// How a GNSS receiver starts after a time off: hot, warm or cold.
public enum ReceiverStartKind: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Ephemeris, almanac, time and position kept and current: a fix in about a second.
    case hot
    /// Almanac, time and position kept, ephemeris stale: the ephemeris must be broadcast again
    /// (18-30 s of the satellites' own data).
    case warm
    /// Nothing kept (no backup power, or a cold reset): satellites searched for from scratch.
    case cold

    /// `hot`, `warm` or `cold`.
    public var description: String { rawValue }
}

/// A receiver's starts as a function of its time off, and its accuracy as it converges after
/// one: the simulator under gpsd runs on it, and the product predicts a wake's start with it.
///
/// The defaults are a u-blox M8's (MAX-M8Q and NEO-M8 data sheets: cold start 26 s, hot 1 s,
/// aided 2 s; ephemeris current for about 4 h): hot within the ephemeris's validity, then warm
/// while the almanac holds, then cold. The data sheets give no warm start: a warm start
/// waits for a fresh ephemeris, which each satellite broadcasts in 18-30 s, so it is taken as
/// 25 s, close to a cold one (as EG25-G users report).
public struct ReceiverStartModel: Sendable, Hashable {
    /// Time to first fix after a hot start.
    public var hotTimeToFix: Duration = .seconds(1)
    /// Time to first fix after a warm start.
    public var warmTimeToFix: Duration = .seconds(25)
    /// Time to first fix after a cold start.
    public var coldTimeToFix: Duration = .seconds(26)
    /// How long an ephemeris stays current: a start with an older one is warm.
    public var ephemerisValidity: Duration = .seconds(4 * 3600)
    /// How long an almanac, a time and a position kept stay good enough for a warm start: older,
    /// a cold one. u-blox gives "several weeks" for the almanac; taken as two.
    public var almanacValidity: Duration = .seconds(14 * 86_400)
    /// How long a receiver must track to collect the satellites' ephemeris anew: each broadcasts
    /// its own every 30 s. A hot start's 1 s collects none, so wakes a few minutes apart with
    /// a fix each still end in warm starts once the ephemeris of the last long run is stale.
    public var ephemerisCollection: Duration = .seconds(30)
    /// The error of a first fix (metres, 1 sigma) after each kind of start.
    public var firstFixError: [ReceiverStartKind: Double] = [.hot: 6, .warm: 20, .cold: 30]
    /// The error the fixes converge to (metres, 1 sigma): the M8's 2.5 m CEP.
    public var convergedError: Double = 2.5
    /// How fast the error converges after a first fix: it closes 63 % of the gap in this time.
    public var convergence: Duration = .seconds(15)

    /// The u-blox M8's figures.
    public init() {}

    /// The start of a receiver whose ephemeris is `ephemerisAge` old (`nil`: it has none), its
    /// backup power kept or not.
    public func start(ephemerisAge: Duration?, backupKept: Bool) -> ReceiverStartKind {
        guard backupKept, let ephemerisAge, ephemerisAge < almanacValidity else { return .cold }
        return ephemerisAge < ephemerisValidity ? .hot : .warm
    }

    /// The time to first fix of a `kind` start.
    public func timeToFix(_ kind: ReceiverStartKind) -> Duration {
        switch kind {
        case .hot: hotTimeToFix
        case .warm: warmTimeToFix
        case .cold: coldTimeToFix
        }
    }

    /// The start a measured time to first fix was: the kind whose time it is nearest (halfway
    /// between two kinds' times, the longer).
    public func kind(ofTimeToFix time: Duration) -> ReceiverStartKind {
        if time <= (hotTimeToFix + warmTimeToFix) / 2 { return .hot }
        return time <= (warmTimeToFix + coldTimeToFix) / 2 ? .warm : .cold
    }

    /// The error (metres) of the fix `sinceFirstFix` after the first fix of a `kind` start.
    public func error(after kind: ReceiverStartKind, sinceFirstFix: Duration) -> Double {
        let first = firstFixError[kind] ?? convergedError
        let elapsed = max(0, sinceFirstFix.seconds)
        let remaining = exp(-elapsed / max(convergence.seconds, 0.001))
        return convergedError + (first - convergedError) * remaining
    }
}
