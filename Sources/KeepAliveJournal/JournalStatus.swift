public import FoundationEssentials

/// What a journal holds and how far each destination got, for `keepalive journal status`.
public struct JournalStatus: Sendable, Hashable, Codable {
    /// The journal file.
    public var file: URL {
        get { URL(fileURLWithPath: path) }
        set { path = newValue.path }
    }
    /// Stored as a path, so the JSON of `keepalive journal status --json` says `"path"`.
    var path: String
    /// Fixes held now.
    public var records: Int
    /// Bytes in use in the database file (pages not free).
    public var bytes: Int64
    /// The time of the oldest fix held, by the fix's own clock.
    public var oldestFix: Date?
    /// The time of the newest fix held.
    public var newestFix: Date?
    /// The sequence number of the last fix appended (numbers are never reused).
    public var lastSequence: Int64
    /// Fixes dropped by retention, ever.
    public var dropped: Int64
    /// Of ``dropped``, those some destination had not delivered.
    public var droppedUndelivered: Int64
    /// Each destination's queue, by name.
    public var destinations: [DestinationStatus]
    /// How far the system clock was from the receiver's at the newest of the last 1,000 fixes
    /// that were compared (`nil`: none was, as in a replay).
    public var systemClockOffset: SystemClockOffset?
}

/// One destination's queue.
public struct DestinationStatus: Sendable, Hashable, Codable {
    /// The destination's name (`--deliver NAME=URL`): its queue is kept under it.
    public var name: String
    /// Its settings, as given (a URL; passwords are never in it, only the path of their file).
    public var settings: String
    /// Fixes not yet delivered: those after the cursor and dead letters queued for retry.
    public var depth: Int
    /// The last sequence number delivered in order.
    public var deliveredThrough: Int64
    /// How long the oldest undelivered fix has waited since it was recorded, in seconds.
    public var oldestUndeliveredAge: Double?
    /// When a batch was last acknowledged.
    public var lastSuccess: Date?
    /// Why the last batch failed, if one did.
    public var lastError: String?
    /// When it failed.
    public var lastErrorAt: Date?
    /// Records refused for good and set aside (see ``DeadLetter``).
    public var deadLetters: Int
    /// The process delivering now, if any (`pid@host/boot role`), and until when its lease holds.
    public var deliveredBy: String?
    /// Since when that process has delivered (unknown for a lease taken by a version before
    /// 2026-12-06).
    public var deliveredSince: Date?
}

/// A record a destination refused for good, kept aside with why.
public struct DeadLetter: Sendable, Hashable, Codable {
    /// The destination that refused it.
    public var destination: String
    /// The fix's sequence number in the journal.
    public var sequence: Int64
    /// The server's answer (status and body, shortened).
    public var reason: String
    /// How many times it was refused.
    public var tries: Int
    /// When it was set aside.
    public var at: Date
    /// Asked to be sent again (`keepalive journal retry`).
    public var isQueuedForRetry: Bool
}
