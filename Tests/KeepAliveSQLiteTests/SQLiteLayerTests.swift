import FoundationEssentials
import Glibc
import KeepAliveSQLite
import Testing

/// The journal's SQLite layer on real files: values as stored and read back, transactions,
/// several statements in one string, and migrations noted as GRDB noted them.
@Suite final class SQLiteLayerTests {
    let folder: String

    init() throws {
        var template = Array("/tmp/keepalive-sqlite-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw SQLiteError(code: -1, message: "mkdtemp failed") }
        folder = String(cString: made)
    }

    deinit { try? FileManager.default.removeItem(atPath: folder) }

    func database(_ name: String = "test.sqlite") throws -> SQLiteDatabase {
        try SQLiteDatabase(path: "\(folder)/\(name)")
    }

    @Test func valuesReadBackAsTheyWereBoundAndAMismatchThrows() throws {
        let db = try database()
        try db.write { db in
            try db.execute(sql: "CREATE TABLE t (i INTEGER, r REAL, s TEXT, n INTEGER)")
            try db.execute(sql: "INSERT INTO t VALUES (?, ?, ?, ?)", arguments: [Int64(1) << 40, 2.0, "é ✓", nil as Int?])
        }
        let row = try #require(try db.read { db in try SQLiteRow.fetchOne(db, sql: "SELECT i, r, s, n, r FROM t") })
        #expect(try row[0] as Int64 == 1 << 40)
        #expect(try row[1] as Double == 2.0)
        // A REAL column's whole number reads as an integer; a fraction would not.
        #expect(try row[4] as Int == 2)
        #expect(try row[2] as String == "é ✓")
        #expect(try row[3] as Int? == nil)
        #expect(throws: SQLiteError.self) { try row[3] as Int }
        #expect(throws: SQLiteError.self) { try row[2] as Double }
        #expect(throws: SQLiteError.self) { try row[9] as Int? }
        let error = try #require(throws: SQLiteError.self) { try db.read { db in try db.execute(sql: "SELECT ?", arguments: [1, 2]) } }
        #expect(error.primaryCode == SQLiteError.range)
    }

    @Test func aWriteThatThrowsLeavesNothingBehind() throws {
        let db = try database()
        try db.write { db in try db.execute(sql: "CREATE TABLE t (v INTEGER NOT NULL)") }
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try db.write { db in
                try db.execute(sql: "INSERT INTO t VALUES (1)")
                throw Stop()
            }
        }
        #expect(throws: SQLiteError.self) {
            try db.write { db in try db.execute(sql: "INSERT INTO t VALUES (2); INSERT INTO t VALUES (NULL)") }
        }
        #expect(try db.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM t") } == 0)
        try db.write { db in
            try db.execute(sql: "INSERT INTO t VALUES (3)")
            #expect(db.lastInsertedRowID == 1)
            try db.execute(sql: "UPDATE t SET v = v + 1")
            #expect(db.changesCount == 1)
        }
        #expect(try db.read { db in try Int.fetchAll(db, sql: "SELECT v FROM t") } == [4])
    }

    /// A lease's commit: seen by another connection at once, no checkpoint in it (an unsynced
    /// checkpoint could lose what it moved from the log), the connection's settings back after,
    /// a body that throws rolled back.
    @Test func anUnsyncedWriteIsSeenAtOnceCheckpointsNothingAndPutsTheSettingsBack() throws {
        let path = "\(folder)/wal.sqlite"
        let db = try SQLiteDatabase(path: path) { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA wal_autocheckpoint = 1")
        }
        try db.write { db in try db.execute(sql: "CREATE TABLE t (b BLOB)") }
        let size = { () throws -> Int in (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? -1 }
        let before = try size()
        let blob = String(repeating: "x", count: 20_000)
        try db.writeUnsynced { db in try db.execute(sql: "INSERT INTO t VALUES (?)", arguments: [blob]) }
        #expect(try size() == before, "the pages stay in the log: no checkpoint")
        let other = try SQLiteDatabase(path: path)
        #expect(try other.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM t") } == 1)
        #expect(try db.read { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") } == 2)
        #expect(try db.read { db in try Int.fetchOne(db, sql: "PRAGMA wal_autocheckpoint") } == 1)
        #expect(throws: SQLiteError.self) {
            try db.writeUnsynced { db in
                try db.execute(sql: "INSERT INTO t VALUES (1)")
                try db.execute(sql: "INSERT INTO nowhere VALUES (1)")
            }
        }
        #expect(try other.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM t") } == 1)
        #expect(try db.read { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") } == 2)
        try db.write { db in try db.execute(sql: "INSERT INTO t VALUES (2)") }
        #expect(try size() > before, "a synced write checkpoints, the unsynced pages with it")
    }

    @Test func severalStatementsRunInTurnAndAFailureNamesSQLitesReason() throws {
        let db = try database()
        // The second statement names a table the first creates: prepared only once that ran.
        try db.write { db in try db.execute(sql: "CREATE TABLE a (v); INSERT INTO a VALUES (1); ALTER TABLE a RENAME TO b;") }
        #expect(try db.read { db in try db.tableExists("b") && !db.tableExists("a") })
        let error = try #require(throws: SQLiteError.self) { try db.read { db in try db.execute(sql: "SELECT * FROM missing") } }
        #expect(error.message.contains("no such table: missing"))
    }

    @Test func migrationsApplyOnceInOrderAndANewerFileIsSeen() throws {
        let path = "\(folder)/migrated.sqlite"
        var migrator = SQLiteMigrator()
        migrator.registerMigration("v1") { db in try db.execute(sql: "CREATE TABLE t (v INTEGER)") }
        migrator.registerMigration("v2") { db in try db.execute(sql: "ALTER TABLE t ADD COLUMN w INTEGER") }
        let db = try SQLiteDatabase(path: path)
        try migrator.migrate(db)
        try migrator.migrate(db)  // nothing left to apply: v2's ALTER would fail if run again
        #expect(try db.read { db in try migrator.appliedIdentifiers(db) } == ["v1", "v2"])
        #expect(try db.read { db in try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY rowid") } == ["v1", "v2"])
        #expect(try db.read { db in try migrator.hasBeenSuperseded(db) } == false)

        var failing = migrator
        failing.registerMigration("v3") { db in
            try db.execute(sql: "CREATE TABLE half (v INTEGER)")
            try db.execute(sql: "INSERT INTO nowhere VALUES (1)")
        }
        #expect(throws: SQLiteError.self) { try failing.migrate(db) }
        #expect(try db.read { db in try db.tableExists("half") } == false)
        #expect(try db.read { db in try migrator.appliedIdentifiers(db) } == ["v1", "v2"])

        try db.write { db in try db.execute(sql: "INSERT INTO grdb_migrations VALUES ('v9 future')") }
        #expect(try db.read { db in try migrator.hasBeenSuperseded(db) })
    }

    @Test func anExtendedCodeIsToldByItsPrimaryCodeAndALibraryNotLoadedByItsOwn() {
        #expect(SQLiteError(code: 10 | (4 << 8), message: "disk I/O error").primaryCode == SQLiteError.ioError)  // IOERR_FSYNC
        #expect(SQLiteError(code: SQLiteError.notLoaded, message: "no libsqlite3").primaryCode == SQLiteError.notLoaded)
    }

    @Test func aFileThatCannotBeOpenedIsSaidSoOnce() {
        let error = #expect(throws: SQLiteError.self) {
            _ = try SQLiteDatabase(path: "\(folder)/no such folder/journal.sqlite", readOnly: true)
        }
        #expect(error?.primaryCode == SQLiteError.cannotOpen)
    }

    @Test func aFileThatIsNotADatabaseIsSaidSo() throws {
        let path = "\(folder)/text.sqlite"
        let file = try #require(fopen(path, "w"))
        fputs(String(repeating: "not a database\n", count: 100), file)
        fclose(file)
        let error = try #require(throws: SQLiteError.self) {
            let db = try SQLiteDatabase(path: path, readOnly: true)
            _ = try db.read { db in try SQLiteRow.fetchAll(db, sql: "SELECT * FROM sqlite_master") }
        }
        #expect(error.primaryCode == SQLiteError.notADatabase)
    }
}
