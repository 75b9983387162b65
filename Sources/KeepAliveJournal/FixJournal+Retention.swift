import FoundationEssentials
import KeepAliveSQLite
import Logging
import KeepAliveCore

/// Retention: the oldest fixes go first once the journal passes an age, count or byte bound;
/// what was dropped is counted (and how much of it some destination had not delivered) and logged.
///
/// Age is never judged by the system clock, which a board without a real-time clock gets
/// wrong by years until the network or the receiver sets it. It is judged by the receivers'
/// own times: a fix is as old as the newest trusted fix time in the journal is after its own
/// (``SystemClockOffset/earliestTrustedTime``); a fix without a trusted time goes with the
/// fixes numbered after it. And age takes only what every destination delivered: a fix some
/// destination still waits for goes only to keep the count or size bound.
extension FixJournal {
    /// Applies the retention bounds now (appends do it every 256 fixes). Returns how many fixes
    /// went. A journal opened ``Access/readOnly`` is left as it is.
    @discardableResult
    public func applyRetention() throws(JournalError) -> Int {
        guard access == .readWrite else { return 0 }
        let trusted = SystemClockOffset.earliestTrustedTime.timeIntervalSince1970
        let (dropped, undelivered) = try write { db -> (Int, Int) in
            var dropped = 0
            var undelivered = 0
            // Dead letters keep their records; an undelivered record is one past some destination's cursor.
            let lowestCursor = try Int64.fetchOne(db, sql: "SELECT min(deliveredThrough) FROM destination")
            func drop(_ condition: String, _ arguments: SQLiteArguments) throws {
                let keep = " AND seq NOT IN (SELECT seq FROM deadLetter)"
                if let lowestCursor {
                    undelivered += try Int.fetchOne(
                        db, sql: "SELECT count(*) FROM fix WHERE \(condition)\(keep) AND seq > ?",
                        arguments: arguments + [lowestCursor]
                    ) ?? 0
                }
                try db.execute(sql: "DELETE FROM fix WHERE \(condition)\(keep)", arguments: arguments)
                dropped += db.changesCount
            }
            // Both checks start from the ends of the primary key, so the common case (nothing
            // due) scans nothing: appends run this every 256 fixes.
            if let maximumAge = retention.maximumAge,
                let newest = try Double.fetchOne(
                    db, sql: "SELECT fixTime FROM fix WHERE fixTime >= ? ORDER BY seq DESC LIMIT 1", arguments: [trusted]
                ),
                let through = try Int64.fetchOne(
                    db, sql: "SELECT max(seq) FROM fix WHERE fixTime >= ? AND fixTime < ?", arguments: [trusted, newest - maximumAge.seconds]
                )
            {
                try drop("seq <= ?", [min(through, lowestCursor ?? through)])
            }
            let span = try Int.fetchOne(db, sql: "SELECT max(seq) - min(seq) + 1 FROM fix") ?? 0
            if let maximum = retention.maximumCount, span > maximum {
                let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM fix") ?? 0
                if count > maximum {
                    try drop("seq IN (SELECT seq FROM fix ORDER BY seq LIMIT ?)", [count - maximum])
                }
            }
            if let maximum = retention.maximumBytes {
                // Delete a tenth of the rows at a time until the pages in use fit.
                while try Self.bytesInUse(db) > maximum {
                    let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM fix") ?? 0
                    guard count > 0 else { break }
                    let before = dropped
                    try drop("seq IN (SELECT seq FROM fix ORDER BY seq LIMIT ?)", [max(1, count / 10)])
                    if dropped == before { break }
                }
            }
            if dropped > 0 {
                try db.execute(
                    sql: """
                        INSERT INTO counter (name, value) VALUES ('dropped', ?), ('droppedUndelivered', ?)
                        ON CONFLICT(name) DO UPDATE SET value = value + excluded.value
                        """,
                    arguments: [dropped, undelivered]
                )
            }
            return (dropped, undelivered)
        }
        if dropped > 0 {
            logger.warning(
                "journal retention dropped the oldest fixes",
                metadata: ["dropped": "\(dropped)", "undelivered": "\(undelivered)", "path": "\(filePath)"]
            )
        }
        return dropped
    }

    static func bytesInUse(_ db: SQLiteConnection) throws -> Int64 {
        let pages = try Int64.fetchOne(db, sql: "PRAGMA page_count") ?? 0
        let free = try Int64.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0
        let size = try Int64.fetchOne(db, sql: "PRAGMA page_size") ?? 4096
        return (pages - free) * size
    }

    /// What the journal holds and each destination's queue.
    public func status() throws(JournalError) -> JournalStatus {
        let now = now().timeIntervalSince1970
        return try read { db in
            let summary = try SQLiteRow.fetchOne(
                db, sql: "SELECT count(*), min(coalesce(fixTime, recordedAt)), max(coalesce(fixTime, recordedAt)), max(seq) FROM fix"
            )
            let counters = try Dictionary(
                uniqueKeysWithValues: SQLiteRow.fetchAll(db, sql: "SELECT name, value FROM counter").map { (try $0[0] as String, try $0[1] as Int64) }
            )
            let destinations = try Self.destinationStatuses(db, name: nil, now: now)
            let offset = try Int64.fetchOne(
                db,
                sql: "SELECT clockOffset FROM (SELECT clockOffset FROM fix ORDER BY seq DESC LIMIT 1000) WHERE clockOffset IS NOT NULL LIMIT 1"
            )
            let oldest: Double? = try summary?[1]
            let newest: Double? = try summary?[2]
            return try JournalStatus(
                path: filePath,
                records: summary?[0] ?? 0,
                bytes: try Self.bytesInUse(db),
                oldestFix: oldest.map { Date(timeIntervalSince1970: $0) },
                newestFix: newest.map { Date(timeIntervalSince1970: $0) },
                lastSequence: summary?[3] ?? 0,
                dropped: counters["dropped"] ?? 0,
                droppedUndelivered: counters["droppedUndelivered"] ?? 0,
                destinations: destinations,
                systemClockOffset: offset.map { SystemClockOffset(seconds: Double($0) / 1000) }
            )
        }
    }

    /// One destination's queue (cheaper than the whole status).
    public func status(of destination: String) throws(JournalError) -> DestinationStatus {
        let now = now().timeIntervalSince1970
        return try read { db in
            guard let status = try Self.destinationStatuses(db, name: destination, now: now).first else {
                throw JournalError.unknownDestination(destination)
            }
            return status
        }
    }

    static func destinationStatuses(_ db: SQLiteConnection, name: String?, now: Double) throws -> [DestinationStatus] {
        try SQLiteRow.fetchAll(
            db,
            sql: """
                SELECT d.name, d.settings, d.deliveredThrough, d.lastSuccess, d.lastError, d.lastErrorAt,
                    d.leaseOwner, d.leaseExpires, d.leaseTaken,
                    (SELECT count(*) FROM fix f WHERE f.seq > d.deliveredThrough)
                        + (SELECT count(*) FROM deadLetter l WHERE l.destination = d.name AND l.retry = 1),
                    (SELECT min(f.recordedAt) FROM fix f WHERE f.seq > d.deliveredThrough),
                    (SELECT count(*) FROM deadLetter l WHERE l.destination = d.name)
                FROM destination d WHERE ? IS NULL OR d.name = ? ORDER BY d.name
                """,
            arguments: [name, name]
        ).map { row in
            let lastSuccess: Double? = try row[3]
            let lastErrorAt: Double? = try row[5]
            let owner: String? = try row[6]
            let expires: Double? = try row[7]
            let taken: Double? = try row[8]
            let oldest: Double? = try row[10]
            let holds = owner != nil && (expires ?? 0) >= now
            return try DestinationStatus(
                name: row[0],
                settings: row[1],
                depth: row[9],
                deliveredThrough: row[2],
                oldestUndeliveredAge: oldest.map { now - $0 },
                lastSuccess: lastSuccess.map { Date(timeIntervalSince1970: $0) },
                lastError: row[4],
                lastErrorAt: lastErrorAt.map { Date(timeIntervalSince1970: $0) },
                deadLetters: row[11],
                deliveredBy: holds ? owner : nil,
                deliveredSince: holds ? taken.map { Date(timeIntervalSince1970: $0) } : nil
            )
        }
    }
}
