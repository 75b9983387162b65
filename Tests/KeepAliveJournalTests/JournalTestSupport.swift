import TestWaiting
import Foundation
import KeepAliveCore

/// A temporary folder for one test's journal, removed when the value goes away.
final class TemporaryFolder: Sendable {
    let path: String

    init() {
        path = NSTemporaryDirectory() + "keepalive-journal-" + UUID().uuidString
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func file(_ name: String) -> String { "\(path)/\(name)" }
}

/// A wall clock a test moves by hand.
final class ManualTime: Sendable {
    private let seconds = Locked(1_795_000_000.0)

    var now: Date { Date(timeIntervalSince1970: seconds.withLock { $0 }) }
    func advance(_ duration: Double) { seconds.withLock { $0 += duration } }
}

/// The journal's tables as its first version (`v1`, before events) created them, for the
/// sqlite3 shell: a test adds its rows after.
let journalLayoutV1 = """
    CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
    INSERT INTO grdb_migrations VALUES ('v1');
    CREATE TABLE fix (seq INTEGER PRIMARY KEY AUTOINCREMENT, uid TEXT NOT NULL UNIQUE, fixTime REAL,
        recordedAt REAL NOT NULL, latitude REAL NOT NULL, longitude REAL NOT NULL, altitudeHAE REAL,
        altitudeMSL REAL, horizontalAccuracy REAL, verticalAccuracy REAL, speed REAL, course REAL,
        mode INTEGER NOT NULL, quality INTEGER, satellites INTEGER, device TEXT, battery INTEGER);
    CREATE INDEX fixTime ON fix(fixTime);
    CREATE TABLE destination (name TEXT PRIMARY KEY, settings TEXT NOT NULL,
        deliveredThrough INTEGER NOT NULL DEFAULT 0, headSeq INTEGER, headTries INTEGER NOT NULL DEFAULT 0,
        lastSuccess REAL, lastError TEXT, lastErrorAt REAL, leaseOwner TEXT, leaseExpires REAL);
    CREATE TABLE deadLetter (destination TEXT NOT NULL REFERENCES destination(name) ON DELETE CASCADE ON UPDATE CASCADE,
        seq INTEGER NOT NULL, reason TEXT NOT NULL, tries INTEGER NOT NULL, at REAL NOT NULL,
        retry INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (destination, seq));
    CREATE TABLE counter (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
    """

func fix(_ index: Int, at time: Date? = nil) -> Location {
    Location(
        latitude: 52 + Double(index) * 1e-5,
        longitude: 4 + Double(index) * 1e-5,
        altitudeMSL: 10.5,
        horizontalAccuracy: 4.2,
        verticalAccuracy: 6.8,
        speed: 10,
        course: 271.6,
        timestamp: time ?? Date(timeIntervalSince1970: 1_700_000_000 + Double(index)),
        mode: .threeDimensional,
        satellitesUsed: 9
    )
}

/// Runs SQLite's own shell on a file (Debian's sqlite3), as another program would. Started with
/// `posix_spawn` and reaped by its pid: the test process starts its other children with
/// swift-subprocess, and Foundation's `Process` beside it would bring a run loop, a socket pair
/// and a second way of watching children into the same process.
/// With `output`, what it prints goes to that file.
/// Its end is awaited off the pool (TestWaiting's `processExit`).
func sqlite3(_ path: String, _ sql: String, output: String? = nil) async throws {
    let arguments = ["/usr/bin/sqlite3"] + (output.map { ["-cmd", ".output \($0)"] } ?? []) + [path, sql]
    var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, arguments[0], nil, nil, &argv, environ)
    let exit = spawned == 0 ? await processExit(of: pid, within: .seconds(60)) : nil
    guard exit == .exited(0) else {
        throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "sqlite3 \(path) failed (install sqlite3: scripts/setup)"])
    }
}
