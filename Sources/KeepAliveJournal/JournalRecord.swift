public import FoundationEssentials
public import KeepAliveCore
public import KeepAliveMonitoring

/// One fix as the journal keeps it: its place in the journal, a stable unique id, the fix
/// itself (its own time in `location.timestamp`), and when and with what battery it was recorded.
/// A record with an ``event`` is a location event (a region entered or left, a significant
/// change, a visit), in order with the fixes; its `location` is the fix that decided it.
public struct JournalRecord: Sendable, Hashable {
    /// The journal's sequence number: increasing, never reused; 0 for a record a
    /// ``JournalWriter`` still holds, read to be sent before its commit (``isStored``).
    public var sequence: Int64
    /// Whether the record is in the journal: `false` for one sent before its commit, which a
    /// power cut before that commit can take (the server may keep it; its ``id`` is never reused).
    public var isStored: Bool { sequence > 0 }
    /// A unique id that stays with the record wherever it is delivered (a UUID: version 7,
    /// time-ordered, since version 3 of the journal; version 4 before).
    public var id: String
    /// The 8 random characters of ``id`` that OwnTracks carries as `_id`: the last 8 of a
    /// time-ordered id (its first 8 are the time, shared by a minute's fixes), the first 8 of the
    /// random ids journals wrote before, so a record journaled then keeps its `_id`.
    public var shortID: String {
        let utf8 = Array(id.utf8)
        let isTimeOrdered = utf8.count == 36 && utf8[14] == UInt8(ascii: "7")
        return String(isTimeOrdered ? id.suffix(8) : id.prefix(8))
    }
    /// The fix as the service delivered it.
    public var location: Location
    /// When it reached the journal: by the system clock, or, where ``systemClockOffset`` says
    /// that clock was wrong then, by the receiver's (the system's reading minus the offset).
    public var recordedAt: Date
    /// How far the system clock was from the receiver's when the fix arrived; `nil` where
    /// they were not compared (a replay, a fix without a time that can be trusted).
    public var systemClockOffset: SystemClockOffset?
    /// Whether the fix arrived while the system clock was wrong (see ``SystemClockOffset``).
    public var isMarkedForClock: Bool { systemClockOffset?.isBeyondTolerance == true }
    /// The battery's charge in percent when it was recorded, where the machine has a battery.
    public var battery: Int?
    /// The location event this record is, or `nil` for a fix.
    public var event: MonitorEvent?
    /// The regions the device was inside when this record was journaled: for each circle or
    /// polygon condition whose last event before this record entered it, that event, in
    /// identifier order (for an event, the regions before it). Read with the queue
    /// (``FixJournal/pending(for:limit:)``), for OwnTracks' `inregions`; empty where a record
    /// is read otherwise.
    public var insideRegions: [MonitorEvent] = []

    /// A record as stored.
    public init(
        sequence: Int64,
        id: String,
        location: Location,
        recordedAt: Date,
        battery: Int? = nil,
        event: MonitorEvent? = nil,
        systemClockOffset: SystemClockOffset? = nil
    ) {
        self.systemClockOffset = systemClockOffset
        self.sequence = sequence
        self.id = id
        self.location = location
        self.recordedAt = recordedAt
        self.battery = battery
        self.event = event
    }
}
