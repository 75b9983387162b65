public import FoundationEssentials
import KeepAliveCore

/// How far the system clock was from the receiver's when a fix arrived: the system's time
/// minus the fix's own time (gpsd's TPV time), positive when the system clock is ahead.
///
/// The journal compares the two for every live fix it records. A fix that arrived while they
/// were more than ``tolerance`` apart is *marked*: its record's ``JournalRecord/recordedAt`` is
/// given in the receiver's time (the system's reading minus the offset), so exports and
/// uploads carry the receiver's time, not the wrong one.
public struct SystemClockOffset: Sendable, Hashable, Codable {
    /// Seconds: the system clock's reading minus the receiver's time, when the fix arrived.
    public var seconds: Double

    /// Beyond this, the system clock is taken to be wrong: 10 s. A live fix reaches the
    /// system well within it (a receiver at 4800 baud reports its second within 1-2 s), and a
    /// clock that no network or receiver has set is off by hours or years.
    public static let tolerance: Duration = .seconds(10)

    /// Receiver times before 2020 are not trusted: a receiver that lost its almanac or rolled
    /// over its GPS week (every 1,024 weeks) reports 1980, 1999 or 2006.
    public static let earliestTrustedTime = Date(timeIntervalSince1970: 1_577_836_800)

    /// An offset of `seconds`.
    public init(seconds: Double) {
        self.seconds = seconds
    }

    /// The offset of a fix whose own time is `fixTime`, read by the system clock at
    /// `systemTime`; `nil` when the fix has no time or one that cannot be trusted.
    public init?(fixTime: Date?, systemTime: Date) {
        guard let fixTime, Self.isTrusted(fixTime) else { return nil }
        seconds = (systemTime.timeIntervalSince(fixTime) * 1000).rounded() / 1000  // as the journal keeps it
    }

    /// Whether a receiver's time can be trusted (no earlier than ``earliestTrustedTime``).
    public static func isTrusted(_ fixTime: Date) -> Bool {
        fixTime >= earliestTrustedTime
    }

    /// Whether the system clock was wrong: more than ``tolerance`` from the receiver's.
    public var isBeyondTolerance: Bool { abs(seconds) > Self.tolerance.seconds }

    /// "3.2 s ahead of", "1 year 12 days behind": the offset in words, for messages.
    public var words: String {
        let size = abs(seconds)
        let direction = seconds >= 0 ? "ahead of" : "behind"
        guard size >= 120 else { return "\((size * 10).rounded() / 10) s \(direction)" }
        let minutes = Int((size / 60).rounded())
        let (days, restMinutes) = minutes.quotientAndRemainder(dividingBy: 1_440)
        let (years, restDays) = days.quotientAndRemainder(dividingBy: 365)
        var parts: [String] = []
        if years > 0 { parts.append(years == 1 ? "1 year" : "\(years) years") }
        if restDays > 0 { parts.append(restDays == 1 ? "1 day" : "\(restDays) days") }
        if years == 0, restMinutes > 0 {
            let (hours, rest) = restMinutes.quotientAndRemainder(dividingBy: 60)
            if hours > 0 { parts.append("\(hours) h") }
            if rest > 0 { parts.append("\(rest) min") }
        }
        return parts.joined(separator: " ") + " " + direction
    }
}
