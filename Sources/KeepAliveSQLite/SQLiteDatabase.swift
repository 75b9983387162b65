import Glibc
import CSQLite

/// A ``SQLiteConnection`` shared by threads: one caller at a time, each read or write in its
/// own transaction. Not reentrant: a body must not call its database again.
package final class SQLiteDatabase: @unchecked Sendable {
    // Unchecked: `connection` is used only between lock and unlock below.
    private let connection: SQLiteConnection
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    /// Opens `path` (see ``SQLiteConnection/init(path:readOnly:busyTimeout:)``) and runs
    /// `prepare` on the new connection before anything else.
    package init(
        path: String, readOnly: Bool = false, busyTimeout: Duration = .seconds(10),
        prepare: (SQLiteConnection) throws -> Void = { _ in }
    ) throws {
        connection = try SQLiteConnection(path: path, readOnly: readOnly, busyTimeout: busyTimeout)
        try prepare(connection)
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        connection.close()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Closes the connection; the database is unusable after.
    package func close() {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        connection.close()
    }

    /// Runs `body` in a read transaction (`BEGIN DEFERRED`): what it reads is one snapshot.
    package func read<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try inTransaction(.read, body)
    }

    /// Runs `body` in a write transaction (`BEGIN IMMEDIATE`, so another process's writer is
    /// waited for up front): committed when it returns, rolled back when it throws.
    package func write<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try inTransaction(.write, body)
    }

    /// Runs `body` outside any transaction (what a `PRAGMA` that cannot run in one needs).
    package func withoutTransaction<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(connection)
    }

    /// Runs `body` in a write transaction whose commit is not synced to the disk: `synchronous =
    /// OFF` and no checkpoint for it alone, the connection's own settings back before it returns.
    /// For rows that matter only while the processes sharing the file run (a lease): every
    /// connection sees the commit at once, as any other; a power cut may take it, and nothing
    /// else (a checkpoint is what an unsynced commit could break, so none runs in it). The next
    /// synced commit syncs it with its own. On a card that takes a second a sync, it costs none.
    package func writeUnsynced<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        try refuseWritesIfSettingsLost()
        let synchronous = try Int.fetchOne(connection, sql: "PRAGMA synchronous") ?? 2
        let checkpoint = try Int.fetchOne(connection, sql: "PRAGMA wal_autocheckpoint") ?? 1000
        // Each setting changed on its own, so a failure puts back exactly what was changed.
        var changed: [String] = []
        defer { putBack(changed) }
        try connection.execute(sql: "PRAGMA wal_autocheckpoint = 0")
        changed.append("PRAGMA wal_autocheckpoint = \(checkpoint)")
        try connection.execute(sql: "PRAGMA synchronous = OFF")
        changed.append("PRAGMA synchronous = \(synchronous)")
        return try transaction(.write, body)
    }

    /// Runs each statement of `settings`, the last changed first; if one fails, every later
    /// write refuses (``refuseWritesIfSettingsLost()``) rather than commit unsynced.
    private func putBack(_ settings: [String]) {
        for setting in settings.reversed() {
            do { try connection.execute(sql: setting) } catch { settingsLost = true }
        }
    }

    /// Set when the connection's own settings could not be put back after an unsynced write:
    /// every write refuses from then on rather than commit unsynced. Reads go on.
    private var settingsLost = false

    private func refuseWritesIfSettingsLost() throws {
        if settingsLost {
            throw SQLiteError(code: SQLITE_MISUSE, message: "the connection's synchronous setting could not be put back after an unsynced write: reopen the database")
        }
    }

    /// What a transaction may do: a read sees one snapshot; a write takes the file's write lock
    /// up front.
    private enum Access {
        case read, write
        var begin: String { self == .read ? "BEGIN DEFERRED" : "BEGIN IMMEDIATE" }
    }

    private func inTransaction<T>(_ access: Access, _ body: (SQLiteConnection) throws -> T) throws -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try transaction(access, body)
    }

    /// `body` in a transaction of `access`; the mutex held.
    private func transaction<T>(_ access: Access, _ body: (SQLiteConnection) throws -> T) throws -> T {
        if access == .write { try refuseWritesIfSettingsLost() }
        try connection.execute(sql: access.begin)
        do {
            let result = try body(connection)
            try connection.execute(sql: "COMMIT")
            return result
        } catch {
            // A failed COMMIT (a full disk) may leave the transaction open: never keep it.
            if connection.isInsideTransaction { try? connection.execute(sql: "ROLLBACK") }
            throw error
        }
    }
}
