/// How much the journal keeps: the oldest fixes go first once any bound is passed.
public struct JournalRetention: Sendable, Hashable {
    /// Fixes recorded longer ago than this are dropped (default 90 days).
    public var maximumAge: Duration?
    /// At most this many fixes (default 10 million, about 1.5 GB).
    public var maximumCount: Int?
    /// At most this many bytes in use in the database file (default 2 GiB).
    public var maximumBytes: Int64?

    /// Limits by age, count and bytes; `nil` lifts one.
    public init(
        maximumAge: Duration? = .seconds(90 * 86_400),
        maximumCount: Int? = 10_000_000,
        maximumBytes: Int64? = 2 << 30
    ) {
        self.maximumAge = maximumAge
        self.maximumCount = maximumCount
        self.maximumBytes = maximumBytes
    }

    /// Keeps everything.
    public static let unlimited = JournalRetention(maximumAge: nil, maximumCount: nil, maximumBytes: nil)
}
