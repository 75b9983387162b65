import FoundationEssentials
import Glibc
import KeepAliveSQLite
import KeepAliveCore
import KeepAliveMonitoring

/// Each destination's queue in the journal: how far it was delivered in order, who delivers it
/// now (a lease, so the service and `keepalive upload` never deliver it at once), and its
/// dead letters.
extension FixJournal {
    /// Adds a destination, or changes its settings: its queue is kept either way. A new
    /// destination starts with every record the journal holds. One already there with these
    /// settings (every start after the first) costs a read, not a commit: on a card that takes
    /// a second to sync, the service's first fixes would wait for it. Nor does a new one wait
    /// for a sync (on a first start, the WAL's creation and two syncs: 6 s of such a card): its
    /// commit goes to the disk with the next synced one (the WAL is written in order), before
    /// any fix is told stored or any delivery is recorded, and one a power cut took is
    /// registered again at the next start, with every record.
    public func register(destination name: String, settings: String) throws(JournalError) {
        let stored = try read { db in
            try String.fetchOne(db, sql: "SELECT settings FROM destination WHERE name = ?", arguments: [name])
        }
        guard stored != settings else { return }
        try write(synced: false) { db in
            try db.execute(
                sql: """
                    INSERT INTO destination (name, settings) VALUES (?, ?)
                    ON CONFLICT(name) DO UPDATE SET settings = excluded.settings
                    """,
                arguments: [name, settings]
            )
        }
    }

    /// The destinations and their settings, by name.
    public func destinations() throws(JournalError) -> [(name: String, settings: String)] {
        try read { db in
            try SQLiteRow.fetchAll(db, sql: "SELECT name, settings FROM destination ORDER BY name").map { (try $0[0], try $0[1]) }
        }
    }

    /// Takes or renews the right to deliver `destination` until `ttl` from now. `false` while
    /// another owner's lease holds. Leases are kept in wall-clock time (processes share them
    /// through the file): a lease that ends more than twice `ttl` ahead was taken before the
    /// clock went back, and is over. So is the lease of a process of this machine that is gone
    /// (an owner is `pid@host/boot role`): one of an earlier boot (a power cut, a reboot), or
    /// of this boot whose process no longer runs (killed): its destination is taken at once.
    ///
    /// A lease is shared by running processes only, so its commit is not synced (a power cut
    /// ends every holder with it): a deliverer's first batch does not wait for a sync, which on
    /// a card that takes a second for each write held the first fixes after a start for 17 s.
    public func acquireLease(for destination: String, owner: String, ttl: Duration) throws(JournalError) -> Bool {
        let now = now().timeIntervalSince1970
        let holder = try read { db in try String.fetchOne(db, sql: "SELECT leaseOwner FROM destination WHERE name = ?", arguments: [destination]) }
        let gone = holder.flatMap { Self.isGone($0, besides: owner) } == true ? holder : nil
        return try write(synced: false) { db in
            try db.execute(
                sql: """
                    UPDATE destination SET leaseOwner = ?, leaseExpires = ?,
                        leaseTaken = CASE WHEN leaseOwner = ? AND leaseTaken IS NOT NULL THEN leaseTaken ELSE ? END
                    WHERE name = ? AND (leaseOwner IS NULL OR leaseOwner = ? OR leaseOwner = ? OR leaseExpires < ? OR leaseExpires > ?)
                    """,
                arguments: [owner, now + ttl.seconds, owner, now, destination, owner, gone, now, now + 2 * ttl.seconds]
            )
            return db.changesCount == 1
        }
    }

    /// Who holds `destination`'s lease now, since when and until when; `nil` when no lease
    /// holds (none taken, given up, or run out).
    public func leaseHolder(of destination: String) throws(JournalError) -> DeliveryLease? {
        let now = now().timeIntervalSince1970
        let row = try read { db in
            try SQLiteRow.fetchOne(
                db, sql: "SELECT leaseOwner, leaseTaken, leaseExpires FROM destination WHERE name = ? AND leaseOwner IS NOT NULL",
                arguments: [destination]
            )
        }
        guard let row, let owner: String = try? row[0], let expires: Double = try? row[2], expires >= now else { return nil }
        let taken: Double? = try? row[1]
        return DeliveryLease(
            owner: owner, since: taken.map { Date(timeIntervalSince1970: $0) }, expires: Date(timeIntervalSince1970: expires)
        )
    }

    /// How long `owner`'s lease on `destination` lasts from now (`nil`: another owner's, or none).
    /// A read: a deliverer renews only once its lease has run down (a ``JournalWriter``'s
    /// commits renew it too), so an uncontended lease costs no write of its own.
    public func leaseRemaining(for destination: String, owner: String) throws(JournalError) -> Duration? {
        let now = now().timeIntervalSince1970
        let expires = try read { db in
            try Double.fetchOne(
                db, sql: "SELECT leaseExpires FROM destination WHERE name = ? AND leaseOwner = ?", arguments: [destination, owner]
            )
        }
        return expires.map { .milliseconds(Int64((($0 - now) * 1000).rounded())) }
    }

    /// Whether the lease owner `holder` (`pid@host/boot role`) is a process of this machine that
    /// no longer runs: of an earlier boot, or of this one and gone; `false` for another
    /// machine's or `owner`'s own, and unless certain.
    static func isGone(_ holder: String, besides owner: String) -> Bool {
        func parts(_ text: String) -> (pid: Int32, host: Substring, boot: Substring?)? {
            guard let at = text.firstIndex(of: "@"), let pid = Int32(text[..<at]), pid > 0 else { return nil }
            let machine = text[text.index(after: at)...].prefix { $0 != " " }
            let slash = machine.firstIndex(of: "/")
            return (pid, slash.map { machine[..<$0] } ?? machine, slash.map { machine[machine.index(after: $0)...] })
        }
        guard holder != owner, let held = parts(holder), let own = parts(owner), held.host == own.host else { return false }
        if let boot = held.boot, let ownBoot = own.boot, boot != ownBoot { return true }
        return kill(held.pid, 0) == -1 && errno == ESRCH
    }

    /// Gives the lease up at once (if `owner` holds it), so another process can deliver; not
    /// synced, as its taking.
    public func releaseLease(for destination: String, owner: String) throws(JournalError) {
        try write(synced: false) { db in
            try db.execute(
                sql: "UPDATE destination SET leaseOwner = NULL, leaseExpires = NULL, leaseTaken = NULL WHERE name = ? AND leaseOwner = ?",
                arguments: [destination, owner]
            )
        }
    }

    /// What `destination` should send next, at most `limit`: dead letters queued for retry
    /// first, then the records (fixes and events) after the last one delivered, in order. Each
    /// comes with the regions the device was inside then (``JournalRecord/insideRegions``).
    public func pending(for destination: String, limit: Int) throws(JournalError) -> [JournalRecord] {
        try pendingRecords(for: destination, limit: limit).records
    }

    /// ``pending(for:limit:)``, saying how many of the records are retried dead letters.
    public func pendingRecords(for destination: String, limit: Int) throws(JournalError) -> PendingRecords {
        try pending(for: destination, limit: limit, after: nil)
    }

    /// ``pending(for:limit:)``, after `after` where that is further than the stored cursor
    /// (a ``JournalWriter`` keeps what was delivered since its last commit). With
    /// `regionsAtEnd`, when the records read reach the journal's end,
    /// ``PendingRecords/regionsAtEnd`` says the regions inside after the last, read in the same
    /// snapshot: where a writer's held records go on from.
    func pending(for destination: String, limit: Int, after: Int64?, regionsAtEnd: Bool = false) throws(JournalError) -> PendingRecords {
        try read { db in
            guard let stored = try Int64.fetchOne(db, sql: "SELECT deliveredThrough FROM destination WHERE name = ?", arguments: [destination])
            else { throw JournalError.unknownDestination(destination) }
            let through = max(stored, after ?? 0)
            let retries = try SQLiteRow.fetchAll(
                db,
                sql: JournalSchema.selectFix
                    + " WHERE seq IN (SELECT seq FROM deadLetter WHERE destination = ? AND retry = 1) ORDER BY seq LIMIT ?",
                arguments: [destination, limit]
            )
            let next = try SQLiteRow.fetchAll(
                db,
                sql: JournalSchema.selectFix + " WHERE seq > ? ORDER BY seq LIMIT ?",
                arguments: [through, limit - retries.count]
            )
            func ordered(_ inside: [String: MonitorEvent]) -> [MonitorEvent] { inside.sorted { $0.key < $1.key }.map(\.value) }
            // A retried dead letter is out of order: the regions before it, each on its own.
            let retried = try retries.map(JournalSchema.record).map { record in
                var record = record
                record.insideRegions = ordered(try Self.regionsInside(db, before: record.sequence))
                return record
            }
            let reachesTheEnd = regionsAtEnd && next.count < limit - retries.count
            guard let first = next.first else {
                let atEnd = reachesTheEnd ? try Self.regionsInside(db, before: .max) : nil
                return PendingRecords(records: retried, retried: retried.count, regionsAtEnd: atEnd)
            }
            var inside = try Self.regionsInside(db, before: first[0])
            let records = try next.map(JournalSchema.record).map { record in
                var record = record
                record.insideRegions = ordered(inside)
                if let event = record.event, event.condition?.isRegion == true {
                    inside[event.identifier] = event.state == .satisfied ? event : nil
                }
                return record
            }
            return PendingRecords(records: retried + records, retried: retried.count, regionsAtEnd: reachesTheEnd ? inside : nil)
        }
    }

    /// `entries`, held by a writer and not yet stored, as records to send (sequence number 0),
    /// each with the regions the device was inside then: `inside` after the stored records (read
    /// in the snapshot that found the entries unstored: one read later could already hold their
    /// own events, and an entry would count as inside the region it enters), then the entries'
    /// own events.
    func unstoredRecords(_ entries: some Collection<Entry>, after inside: [String: MonitorEvent], battery: Int?) -> [JournalRecord] {
        var inside = inside
        return entries.map { entry in
            var record = record(of: entry, battery: entry.battery ?? battery)
            record.insideRegions = inside.sorted { $0.key < $1.key }.map(\.value)
            Self.apply(entry, to: &inside)
            return record
        }
    }

    /// The regions inside after `entry`: its event's region entered or left, if it has one.
    static func apply(_ entry: Entry, to inside: inout [String: MonitorEvent]) {
        guard let event = entry.event, event.condition?.isRegion == true else { return }
        inside[event.identifier] = event.state == .satisfied ? event : nil
    }

    /// Moves each destination's cursor to where `delivered` says (never back), in `db`'s
    /// transaction: a position held by id is found among `records`, stored in that transaction.
    /// Renews the leases of `lease`'s owner too, until its `ttl` from `now`: a service's commits
    /// keep its leases, with no commit of their own.
    static func saveCursors(
        _ delivered: [String: DeliveredPosition], records: [JournalRecord], at now: Double, renewing lease: (owner: String, ttl: Duration)?,
        in db: SQLiteConnection
    ) throws {
        if let lease {
            try db.execute(
                sql: "UPDATE destination SET leaseExpires = ? WHERE leaseOwner = ? AND leaseExpires < ?",
                arguments: [now + lease.ttl.seconds, lease.owner, now + lease.ttl.seconds]
            )
        }
        for (name, position) in delivered {
            let held = position.heldThrough.flatMap { id in records.last { $0.id == id }?.sequence }
            guard let through = [position.through, held].compactMap({ $0 }).max() else { continue }
            try moveCursor(of: name, through: through, at: now, in: db)
        }
    }

    /// The one way a cursor moves on a delivery: forward past `through` (never back), the
    /// success's time noted, the head's refusals forgotten.
    private static func moveCursor(of destination: String, through: Int64, at now: Double, in db: SQLiteConnection) throws {
        try db.execute(
            sql: """
                UPDATE destination SET deliveredThrough = max(deliveredThrough, ?), lastSuccess = ?,
                    headSeq = NULL, headTries = 0 WHERE name = ?
                """,
            arguments: [through, now, destination]
        )
    }

    /// The last sequence number given (0 for none).
    func lastSequence() throws(JournalError) -> Int64 {
        try read { db in try Int64.fetchOne(db, sql: "SELECT ifnull(max(seq), 0) FROM fix") ?? 0 }
    }

    /// The ids of the records stored after `sequence`: which of a writer's held records a
    /// commit that ended meanwhile stored (a few, the newest).
    func storedIDs(after sequence: Int64) throws(JournalError) -> Set<String> {
        try read { db in Set(try String.fetchAll(db, sql: "SELECT uid FROM fix WHERE seq > ?", arguments: [sequence])) }
    }

    /// How many records are numbered after `first` and at most `last`.
    func recordCount(after first: Int64, through last: Int64) throws(JournalError) -> Int {
        try read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM fix WHERE seq > ? AND seq <= ?", arguments: [first, last]) ?? 0 }
    }

    /// The regions entered and not left before `sequence`: the last event of each region
    /// condition, where it entered.
    private static func regionsInside(_ db: SQLiteConnection, before sequence: Int64) throws -> [String: MonitorEvent] {
        let rows = try SQLiteRow.fetchAll(
            db,
            sql: JournalSchema.selectFix + """
                 WHERE seq IN (SELECT max(seq) FROM fix WHERE event IS NOT NULL AND seq < ?
                    AND json_extract(event, '$.condition.type') IN ('circle', 'polygon')
                    GROUP BY json_extract(event, '$.identifier'))
                """,
            arguments: [sequence]
        )
        var inside: [String: MonitorEvent] = [:]
        for event in try rows.compactMap({ try JournalSchema.record($0).event }) where event.state == .satisfied {
            inside[event.identifier] = event
        }
        return inside
    }

    /// Records that the server acknowledged `records`: the in-order cursor moves past them
    /// (never back), dead letters among them are cleared.
    public func markDelivered(_ records: some Collection<JournalRecord>, to destination: String) throws(JournalError) {
        guard !records.isEmpty else { return }
        let now = now().timeIntervalSince1970
        try write { db in
            let through = try Int64.fetchOne(db, sql: "SELECT deliveredThrough FROM destination WHERE name = ?", arguments: [destination]) ?? 0
            let newest = max(through, records.map(\.sequence).max() ?? 0)
            // Only retried dead letters can be at or below the cursor.
            let retried = records.filter { $0.sequence <= through }.map(\.sequence)
            if !retried.isEmpty {
                try db.execute(
                    sql: "DELETE FROM deadLetter WHERE destination = ? AND seq IN (\(retried.map(String.init).joined(separator: ",")))",
                    arguments: [destination]
                )
            }
            try Self.moveCursor(of: destination, through: newest, at: now, in: db)
        }
    }

    /// Notes a failure that will be tried again (the server unreachable, a 5xx).
    public func recordFailure(_ message: String, for destination: String) throws(JournalError) {
        let now = now().timeIntervalSince1970
        try write { db in
            try db.execute(
                sql: "UPDATE destination SET lastError = ?, lastErrorAt = ? WHERE name = ?",
                arguments: [message, now, destination]
            )
        }
    }

    /// Notes that the server refused `record` for good; after `maximumTries` refusals it goes to
    /// the dead letters and the queue moves on. Returns whether it did.
    @discardableResult
    public func recordRefusal(
        of record: JournalRecord,
        reason: String,
        by destination: String,
        maximumTries: Int
    ) throws(JournalError) -> Bool {
        let now = now().timeIntervalSince1970
        return try write { db in
            guard let row = try SQLiteRow.fetchOne(db, sql: "SELECT headSeq, headTries FROM destination WHERE name = ?", arguments: [destination])
            else { throw JournalError.unknownDestination(destination) }
            let head: Int64? = try row[0]
            let tries = (head == record.sequence ? try row[1] as Int : 0) + 1
            try db.execute(
                sql: "UPDATE destination SET headSeq = ?, headTries = ?, lastError = ?, lastErrorAt = ? WHERE name = ?",
                arguments: [record.sequence, tries, reason, now, destination]
            )
            guard tries >= maximumTries else { return false }
            try db.execute(
                sql: """
                    INSERT INTO deadLetter (destination, seq, reason, tries, at, retry) VALUES (?, ?, ?, ?, ?, 0)
                    ON CONFLICT(destination, seq) DO UPDATE SET reason = excluded.reason,
                        tries = deadLetter.tries + excluded.tries, at = excluded.at, retry = 0
                    """,
                arguments: [destination, record.sequence, reason, tries, now]
            )
            try db.execute(
                sql: """
                    UPDATE destination SET deliveredThrough = max(deliveredThrough, ?), headSeq = NULL, headTries = 0
                    WHERE name = ?
                    """,
                arguments: [record.sequence, destination]
            )
            return true
        }
    }

    /// The dead letters, of one destination or all.
    public func deadLetters(for destination: String? = nil) throws(JournalError) -> [DeadLetter] {
        try read { db in
            try SQLiteRow.fetchAll(
                db,
                sql: """
                    SELECT destination, seq, reason, tries, at, retry FROM deadLetter
                    WHERE ? IS NULL OR destination = ? ORDER BY destination, seq
                    """,
                arguments: [destination, destination]
            ).map {
                try DeadLetter(
                    destination: $0[0], sequence: $0[1], reason: $0[2], tries: $0[3],
                    at: Date(timeIntervalSince1970: $0[4]), isQueuedForRetry: $0[5] as Bool
                )
            }
        }
    }

    /// Queues a destination's dead letters to be sent again, before its next records. Returns how many.
    @discardableResult
    public func retryDeadLetters(for destination: String) throws(JournalError) -> Int {
        try write { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM destination WHERE name = ?", arguments: [destination]) != nil
            else { throw JournalError.unknownDestination(destination) }
            try db.execute(sql: "UPDATE deadLetter SET retry = 1 WHERE destination = ?", arguments: [destination])
            return db.changesCount
        }
    }
}

/// How far a destination was delivered beyond its stored cursor: through a stored record, and
/// through a record a ``JournalWriter`` still held when it was sent (by its id).
struct DeliveredPosition: Sendable, Hashable {
    var through: Int64?
    var heldThrough: String?
}

/// What a destination sends next (`JournalWriter.pending(for:limit:)`).
public struct PendingRecords: Sendable {
    /// The records, in the order to send them: dead letters queued for retry, then the records
    /// after the last one delivered, in order (stored, then those a writer still holds).
    public var records: [JournalRecord]
    /// How many of the first ``records`` are retried dead letters.
    public var retried: Int
    /// The regions inside after the journal's last record, in the snapshot the records were
    /// read in, when they reach its end.
    var regionsAtEnd: [String: MonitorEvent]?
}
