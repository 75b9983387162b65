public import FoundationEssentials
import KeepAliveSQLite

/// A time the device slept: no fix could come, and an export starts a new segment after it.
public struct JournalGap: Sendable, Hashable {
    /// The last record before the gap (0: before every record).
    public let afterSequence: Int64
    /// When the sleep began (wall clock).
    public let start: Date
    /// When it ended (wall clock).
    public let end: Date
    /// Why there was no fix (`asleep`).
    public let reason: String
}

extension FixJournal {
    /// Marks `start...end` as a gap after the records stored so far (the device slept).
    @discardableResult
    public func markGap(from start: Date, to end: Date, reason: String) throws(JournalError) -> JournalGap {
        try write { db in
            let after = try Int64.fetchOne(db, sql: "SELECT coalesce(max(seq), 0) FROM fix") ?? 0
            try db.execute(
                sql: "INSERT INTO gap (afterSeq, start, end, reason) VALUES (?, ?, ?, ?)",
                arguments: [after, start.timeIntervalSince1970, end.timeIntervalSince1970, reason]
            )
            return JournalGap(afterSequence: after, start: start, end: end, reason: reason)
        }
    }

    /// Every gap, in order (none in a journal older than gaps, opened read-only).
    public func gaps() throws(JournalError) -> [JournalGap] {
        try read { db in
            guard try db.tableExists("gap") else { return [] }
            return try SQLiteRow.fetchAll(db, sql: "SELECT afterSeq, start, end, reason FROM gap ORDER BY afterSeq, start").map { row in
                try JournalGap(
                    afterSequence: row[0], start: Date(timeIntervalSince1970: row[1]), end: Date(timeIntervalSince1970: row[2]),
                    reason: row[3]
                )
            }
        }
    }
}
