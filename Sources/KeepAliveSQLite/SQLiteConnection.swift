import CSQLite
import KeepAliveCore

/// libsqlite3, loaded on the first connection.
let libsqlite3 = LoadedLibrary(empty: csqlite_table(), load: csqlite_load)

/// One connection to a SQLite file: statements, their rows, the changes they made.
///
/// Not thread-safe: a ``SQLiteDatabase`` hands it to one caller at a time.
package final class SQLiteConnection {
    let handle: OpaquePointer
    /// The file, for messages.
    package let path: String
    let api: UnsafePointer<csqlite_table>
    private var statements: [String: SQLiteStatement] = [:]

    /// Opens `path` (created when missing unless `readOnly`), waiting up to `busyTimeout` for
    /// another connection's lock, with foreign keys enforced.
    package init(path: String, readOnly: Bool, busyTimeout: Duration) throws(SQLiteError) {
        if let error = libsqlite3.error {
            throw SQLiteError(
                code: SQLiteError.notLoaded,
                message: "cannot load libsqlite3 (\(error)): install it (Debian: apt install libsqlite3-0)"
            )
        }
        api = libsqlite3.table
        var handle: OpaquePointer?
        let flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_NOMUTEX
        let code = api.pointee.sqlite3_open_v2(path, &handle, flags, nil)
        guard let handle else {
            throw SQLiteError(code: code, message: "out of memory opening \(path)")
        }
        self.handle = handle
        self.path = path
        guard code == SQLITE_OK else {
            let error = lastError(code)
            close()  // once: deinit closes only what is still open
            throw error
        }
        _ = api.pointee.sqlite3_extended_result_codes(handle, 1)
        _ = api.pointee.sqlite3_busy_timeout(handle, Int32(busyTimeout.components.seconds * 1000))
        do {
            try execute(sql: "PRAGMA foreign_keys = ON")
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    private var isClosed = false

    /// Finalizes the cached statements and closes the file; the connection is unusable after.
    package func close() {
        guard !isClosed else { return }
        isClosed = true
        for statement in statements.values { statement.finalize() }
        statements = [:]
        _ = api.pointee.sqlite3_close_v2(handle)
    }

    /// The error SQLite reports for the last call, which returned `code`.
    func lastError(_ code: Int32) -> SQLiteError {
        let extended = api.pointee.sqlite3_extended_errcode(handle)
        let message = api.pointee.sqlite3_errmsg(handle).map { String(cString: $0) } ?? ""
        return SQLiteError(code: extended & 0xff == code & 0xff ? extended : code, message: message)
    }

    /// Runs `sql`: one statement with `arguments`, or, without arguments, several separated by `;`.
    package func execute(sql: String, arguments: SQLiteArguments = []) throws(SQLiteError) {
        if !arguments.values.isEmpty {
            let statement = try SQLiteStatement(sql: sql, connection: self)
            defer { statement.finalize() }
            try statement.execute(arguments: arguments)
            return
        }
        try SQLiteStatement.executeAll(in: sql, connection: self)
    }

    /// The rows of one query.
    package func rows(sql: String, arguments: SQLiteArguments = []) throws(SQLiteError) -> [SQLiteRow] {
        let statement = try SQLiteStatement(sql: sql, connection: self)
        defer { statement.finalize() }
        return try statement.rows(arguments: arguments)
    }

    /// A statement prepared once for this connection and kept (what is run for every fix).
    package func cachedStatement(sql: String) throws(SQLiteError) -> SQLiteStatement {
        if let statement = statements[sql] { return statement }
        let statement = try SQLiteStatement(sql: sql, connection: self)
        statements[sql] = statement
        return statement
    }

    /// The row id of the last insert.
    package var lastInsertedRowID: Int64 { api.pointee.sqlite3_last_insert_rowid(handle) }

    /// How many rows the last statement changed.
    package var changesCount: Int { Int(api.pointee.sqlite3_changes(handle)) }

    /// Whether a transaction is open.
    package var isInsideTransaction: Bool { api.pointee.sqlite3_get_autocommit(handle) == 0 }

    /// Whether the main schema has a table named `name`.
    package func tableExists(_ name: String) throws(SQLiteError) -> Bool {
        try Bool.fetchOne(self, sql: "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", arguments: [name]) ?? false
    }
}

extension SQLiteRow {
    /// Every row of `sql`.
    package static func fetchAll(_ db: SQLiteConnection, sql: String, arguments: SQLiteArguments = []) throws(SQLiteError) -> [SQLiteRow] {
        try db.rows(sql: sql, arguments: arguments)
    }

    /// The first row of `sql`, if any.
    package static func fetchOne(_ db: SQLiteConnection, sql: String, arguments: SQLiteArguments = []) throws(SQLiteError) -> SQLiteRow? {
        try db.rows(sql: sql, arguments: arguments).first
    }
}

extension SQLiteColumn {
    /// The first column of every row of `sql`.
    package static func fetchAll(_ db: SQLiteConnection, sql: String, arguments: SQLiteArguments = []) throws(SQLiteError) -> [Self] {
        var values: [Self] = []
        for row in try db.rows(sql: sql, arguments: arguments) { values.append(try row[0]) }
        return values
    }

    /// The first column of the first row of `sql`: `nil` when there is no row or it is NULL.
    package static func fetchOne(_ db: SQLiteConnection, sql: String, arguments: SQLiteArguments = []) throws(SQLiteError) -> Self? {
        guard let row = try db.rows(sql: sql, arguments: arguments).first else { return nil }
        return try row[0] as Self?
    }
}
