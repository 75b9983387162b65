import FoundationEssentials
import KeepAliveSQLite
import KeepAliveCore
import KeepAliveMonitoring

/// The journal's tables, their migrations, and how a fix maps to a row.
enum JournalSchema {
    static let migrator: SQLiteMigrator = {
        var migrator = SQLiteMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE fix (
                        seq INTEGER PRIMARY KEY AUTOINCREMENT,
                        uid TEXT NOT NULL UNIQUE,
                        fixTime REAL,
                        recordedAt REAL NOT NULL,
                        latitude REAL NOT NULL,
                        longitude REAL NOT NULL,
                        altitudeHAE REAL,
                        altitudeMSL REAL,
                        horizontalAccuracy REAL,
                        verticalAccuracy REAL,
                        speed REAL,
                        course REAL,
                        mode INTEGER NOT NULL,
                        quality INTEGER,
                        satellites INTEGER,
                        device TEXT,
                        battery INTEGER
                    );
                    CREATE INDEX fixTime ON fix(fixTime);
                    CREATE TABLE destination (
                        name TEXT PRIMARY KEY,
                        settings TEXT NOT NULL,
                        deliveredThrough INTEGER NOT NULL DEFAULT 0,
                        headSeq INTEGER,
                        headTries INTEGER NOT NULL DEFAULT 0,
                        lastSuccess REAL,
                        lastError TEXT,
                        lastErrorAt REAL,
                        leaseOwner TEXT,
                        leaseExpires REAL
                    );
                    CREATE TABLE deadLetter (
                        destination TEXT NOT NULL REFERENCES destination(name) ON DELETE CASCADE ON UPDATE CASCADE,
                        seq INTEGER NOT NULL,
                        reason TEXT NOT NULL,
                        tries INTEGER NOT NULL,
                        at REAL NOT NULL,
                        retry INTEGER NOT NULL DEFAULT 0,
                        PRIMARY KEY (destination, seq)
                    );
                    CREATE TABLE counter (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
                    """
            )
        }
        // Location events (regions, significant changes, visits) in the same sequence as the
        // fixes: a row whose `event` is set is an event, its position the fix that decided it.
        migrator.registerMigration("v2 events") { db in
            try db.execute(
                sql: """
                    ALTER TABLE fix ADD COLUMN event TEXT;
                    CREATE INDEX fixEvent ON fix(seq) WHERE event IS NOT NULL;
                    """
            )
        }
        // No unique index on `uid`: ids are random (122 or 74 bits), and the index cost a page
        // written per fix. The table is rebuilt; AUTOINCREMENT's high mark is carried over, so
        // no number is handed out again.
        migrator.registerMigration("v3 no uid index") { db in
            let top = try Int64.fetchOne(db, sql: "SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'fix'), 0), coalesce((SELECT max(seq) FROM fix), 0))") ?? 0
            let columns = "seq, uid, fixTime, recordedAt, latitude, longitude, altitudeHAE, altitudeMSL, horizontalAccuracy, "
                + "verticalAccuracy, speed, course, mode, quality, satellites, device, battery, event"
            try db.execute(
                sql: """
                    CREATE TABLE fixV3 (
                        seq INTEGER PRIMARY KEY AUTOINCREMENT,
                        uid TEXT NOT NULL,
                        fixTime REAL,
                        recordedAt REAL NOT NULL,
                        latitude REAL NOT NULL,
                        longitude REAL NOT NULL,
                        altitudeHAE REAL,
                        altitudeMSL REAL,
                        horizontalAccuracy REAL,
                        verticalAccuracy REAL,
                        speed REAL,
                        course REAL,
                        mode INTEGER NOT NULL,
                        quality INTEGER,
                        satellites INTEGER,
                        device TEXT,
                        battery INTEGER,
                        event TEXT
                    );
                    INSERT INTO fixV3 (\(columns)) SELECT \(columns) FROM fix;
                    DROP TABLE fix;
                    ALTER TABLE fixV3 RENAME TO fix;
                    CREATE INDEX fixTime ON fix(fixTime);
                    CREATE INDEX fixEvent ON fix(seq) WHERE event IS NOT NULL;
                    DELETE FROM sqlite_sequence WHERE name = 'fix';
                    INSERT INTO sqlite_sequence (name, seq) VALUES ('fix', \(top));
                    """
            )
        }
        // How far the system clock was from the receiver's when each fix arrived, in
        // milliseconds (2 bytes for a live fix's usual few hundred); NULL where not compared.
        migrator.registerMigration("v4 clock offset") { db in
            try db.execute(sql: "ALTER TABLE fix ADD COLUMN clockOffset INTEGER")
        }
        // Times the device slept (wall clock, seconds since 1970), after the record `afterSeq`:
        // an export starts a new segment there.
        migrator.registerMigration("v5 gaps") { db in
            try db.execute(sql: "CREATE TABLE gap (afterSeq INTEGER NOT NULL, start REAL NOT NULL, end REAL NOT NULL, reason TEXT NOT NULL)")
        }
        // When a destination's lease holder took it (wall clock, seconds since 1970): a second
        // process says who delivers and since when.
        migrator.registerMigration("v6 lease taken") { db in
            try db.execute(sql: "ALTER TABLE destination ADD COLUMN leaseTaken REAL")
        }
        return migrator
    }()

    /// What a connection that only reads puts in front of an older layout's tables, so every
    /// query reads them as the newest: for each table that lacks a column later versions added,
    /// a temporary view of the same name (SQLite looks in `temp` first) with those columns as
    /// NULL. Nothing is written to the file.
    static func viewOfOlderLayout(_ db: SQLiteConnection) throws {
        for (table, added) in [("fix", ["event", "clockOffset"]), ("destination", ["leaseTaken"])] {
            let columns = Set(try SQLiteRow.fetchAll(db, sql: "PRAGMA main.table_info(\(table))").map { try $0[1] as String })
            let missing = added.filter { !columns.contains($0) }
            guard !columns.isEmpty, !missing.isEmpty else { continue }
            let nulls = missing.map { "NULL AS \($0)" }.joined(separator: ", ")
            try db.execute(sql: "CREATE TEMP VIEW \(table) AS SELECT *, \(nulls) FROM main.\(table)")
        }
    }

    static let insertFix = """
        INSERT INTO fix (uid, fixTime, recordedAt, latitude, longitude, altitudeHAE, altitudeMSL,
            horizontalAccuracy, verticalAccuracy, speed, course, mode, quality, satellites, device, battery, event, clockOffset)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """

    static let selectFix = """
        SELECT seq, uid, fixTime, recordedAt, latitude, longitude, altitudeHAE, altitudeMSL,
            horizontalAccuracy, verticalAccuracy, speed, course, mode, quality, satellites, device, battery, event, clockOffset
        FROM fix
        """

    static func arguments(
        _ location: Location, event: MonitorEvent?, id: String, recordedAt: Date, battery: Int?, clockOffset: SystemClockOffset?
    ) -> SQLiteArguments {
        [
            id, location.timestamp?.timeIntervalSince1970, recordedAt.timeIntervalSince1970,
            location.latitude, location.longitude, location.altitudeHAE, location.altitudeMSL,
            location.horizontalAccuracy, location.verticalAccuracy, location.speed, location.course,
            location.mode.rawValue, location.quality?.rawValue, location.satellitesUsed, location.device, battery,
            event.map(StoredEvent.init).map(StoredEvent.json),
            clockOffset.map { Int64(($0.seconds * 1000).rounded()) },
        ]
    }

    /// An event as its row's `event` column keeps it: all but the fix, which is the row's.
    struct StoredEvent: Codable {
        var identifier: String
        var state: MonitorState
        var date: Double
        var visit: Visit?
        var condition: MonitorCondition?

        init(_ event: MonitorEvent) {
            identifier = event.identifier
            state = event.state
            date = event.date.timeIntervalSince1970
            visit = event.visit
            condition = event.condition
        }

        static func json(_ event: StoredEvent) -> String {
            // Encoding plain strings, numbers and dates cannot fail.
            String(decoding: (try? JSONEncoder().encode(event)) ?? Data("{}".utf8), as: UTF8.self)
        }

        /// The event of a row, or `nil` for a fix (or a column no version of the journal wrote).
        static func event(_ json: String?, location: Location) -> MonitorEvent? {
            guard let json, let stored = try? JSONDecoder().decode(StoredEvent.self, from: Data(json.utf8)) else { return nil }
            return MonitorEvent(
                identifier: stored.identifier,
                state: stored.state,
                date: Date(timeIntervalSince1970: stored.date),
                location: location,
                visit: stored.visit,
                condition: stored.condition
            )
        }
    }

    static func record(_ row: SQLiteRow) throws(SQLiteError) -> JournalRecord {
        let fixTime: Double? = try row[2]
        let quality: Int? = try row[13]
        let location = try Location(
            latitude: row[4],
            longitude: row[5],
            altitudeHAE: row[6],
            altitudeMSL: row[7],
            horizontalAccuracy: row[8],
            verticalAccuracy: row[9],
            speed: row[10],
            course: row[11],
            timestamp: fixTime.map { Date(timeIntervalSince1970: $0) },
            mode: FixMode(rawValue: row[12]) ?? .notSeen,
            quality: quality.flatMap(FixQuality.init(rawValue:)),
            satellitesUsed: row[14],
            device: row[15]
        )
        let milliseconds: Int64? = try row[18]
        let offset = milliseconds.map { SystemClockOffset(seconds: Double($0) / 1000) }
        let systemTime: Double = try row[3]
        let recordedAt = offset.map { $0.isBeyondTolerance ? systemTime - $0.seconds : systemTime } ?? systemTime
        return try JournalRecord(
            sequence: row[0],
            id: row[1],
            location: location,
            recordedAt: Date(timeIntervalSince1970: recordedAt),
            battery: row[16],
            event: StoredEvent.event(row[17], location: location),
            systemClockOffset: offset
        )
    }
}
