import Foundation
import KeepAliveJournal
import Testing

/// What keeps a group commit small: 1 KB pages, time-ordered ids, no index on the id; and a
/// journal of an earlier layout brought over with every record, id and number.
@Suite struct JournalLayoutTests {
    @Test func aNewJournalHasSmallPagesAndTimeOrderedIds() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("j.sqlite")
        let journal = try FixJournal(file: URL(fileURLWithPath: path), battery: { nil })
        let first = try journal.append(contentsOf: (1...25).map { fix($0) })
        try await Task.sleep(for: .milliseconds(2))
        let second = try journal.append(contentsOf: (26...50).map { fix($0) })
        let records = first + second
        for record in records {
            #expect(record.id.count == 36 && Array(record.id)[14] == "7", "a version 7 UUID: \(record.id)")
            #expect(record.shortID == String(record.id.suffix(8)))
        }
        #expect(first.map(\.id).max()! < second.map(\.id).min()!, "a later commit's ids sort after an earlier one's")
        #expect(Set(records.map(\.shortID)).count == 50)
        try await sqlite3(path, "SELECT 1")  // another program can read it
        let layout = try String(contentsOfFile: try await dump(path, "PRAGMA page_size; SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'fix' AND sql IS NULL;"), encoding: .utf8)
        #expect(layout.split(separator: "\n") == ["1024", "0"], "1 KB pages, and no automatic (unique) index on fix")
    }

    /// A journal written before version 3 (random ids, a unique index on them): rebuilt without
    /// the index, every record kept with its id and `_id`, and numbers go on past the highest
    /// ever handed out (here above the last row, whose newest fixes had been removed).
    @Test func aJournalOfTheEarlierLayoutKeepsItsRecordsIdsAndNumbers() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("old.sqlite")
        try await sqlite3(path, """
            PRAGMA journal_mode = WAL;
            CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
            INSERT INTO grdb_migrations VALUES ('v1'), ('v2 events');
            CREATE TABLE fix (seq INTEGER PRIMARY KEY AUTOINCREMENT, uid TEXT NOT NULL UNIQUE, fixTime REAL,
                recordedAt REAL NOT NULL, latitude REAL NOT NULL, longitude REAL NOT NULL, altitudeHAE REAL,
                altitudeMSL REAL, horizontalAccuracy REAL, verticalAccuracy REAL, speed REAL, course REAL,
                mode INTEGER NOT NULL, quality INTEGER, satellites INTEGER, device TEXT, battery INTEGER, event TEXT);
            CREATE INDEX fixTime ON fix(fixTime);
            CREATE INDEX fixEvent ON fix(seq) WHERE event IS NOT NULL;
            CREATE TABLE destination (name TEXT PRIMARY KEY, settings TEXT NOT NULL,
                deliveredThrough INTEGER NOT NULL DEFAULT 0, headSeq INTEGER, headTries INTEGER NOT NULL DEFAULT 0,
                lastSuccess REAL, lastError TEXT, lastErrorAt REAL, leaseOwner TEXT, leaseExpires REAL);
            CREATE TABLE deadLetter (destination TEXT NOT NULL REFERENCES destination(name) ON DELETE CASCADE ON UPDATE CASCADE,
                seq INTEGER NOT NULL, reason TEXT NOT NULL, tries INTEGER NOT NULL, at REAL NOT NULL,
                retry INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (destination, seq));
            CREATE TABLE counter (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
            INSERT INTO fix (uid, fixTime, recordedAt, latitude, longitude, mode) VALUES
                ('9b2f4c1e-0d7a-4e3b-8c55-1f0e2d3c4b5a', 1700000001, unixepoch(), 52, 4, 3),
                ('c0ffee00-1111-4222-8333-444455556666', 1700000002, unixepoch(), 52.1, 4.1, 3),
                ('deadbeef-aaaa-4bbb-8ccc-dddddddddddd', 1700000003, unixepoch(), 52.2, 4.2, 3);
            DELETE FROM fix WHERE seq = 3;
            """)
        let journal = try FixJournal(file: URL(fileURLWithPath: path), battery: { nil })
        let kept = try journal.records(after: 0)
        #expect(kept.map(\.sequence) == [1, 2])
        #expect(kept.map(\.id) == ["9b2f4c1e-0d7a-4e3b-8c55-1f0e2d3c4b5a", "c0ffee00-1111-4222-8333-444455556666"])
        #expect(kept.map(\.shortID) == ["9b2f4c1e", "c0ffee00"], "a record journaled before keeps its _id")
        #expect(try journal.append(fix(4)).sequence == 4, "3 was handed out once: never again")
        let indexes = try String(contentsOfFile: try await dump(path, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'fix' AND sql IS NULL;"), encoding: .utf8)
        #expect(indexes == "0\n")
    }

    /// What the sqlite3 shell prints for `sql`, in a file.
    private func dump(_ path: String, _ sql: String) async throws -> String {
        let output = path + ".out"
        try await sqlite3(path, sql, output: output)
        return output
    }
}
