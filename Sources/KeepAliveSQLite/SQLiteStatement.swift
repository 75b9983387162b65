import CSQLite

/// One prepared statement of a ``SQLiteConnection``.
package final class SQLiteStatement {
    private let handle: OpaquePointer
    private unowned let connection: SQLiteConnection
    private var isFinalized = false

    /// Prepares the one statement `sql` holds.
    init(sql: String, connection: SQLiteConnection) throws(SQLiteError) {
        var handle: OpaquePointer?
        let code = connection.api.pointee.sqlite3_prepare_v2(connection.handle, sql, -1, &handle, nil)
        guard code == SQLITE_OK else { throw connection.lastError(code) }
        guard let handle else { throw SQLiteError(code: SQLiteError.range, message: "no statement in: \(sql)") }
        self.handle = handle
        self.connection = connection
    }

    private init(handle: OpaquePointer, connection: SQLiteConnection) {
        self.handle = handle
        self.connection = connection
    }

    /// Prepares and runs each statement of `sql` in turn (a statement may name a table an
    /// earlier one creates); empty ones, such as after a trailing `;`, are skipped.
    static func executeAll(in sql: String, connection: SQLiteConnection) throws(SQLiteError) {
        var failure: SQLiteError?
        sql.withCString { start in
            var next: UnsafePointer<CChar>? = start
            while let current = next, current.pointee != 0 {
                var handle: OpaquePointer?
                var tail: UnsafePointer<CChar>?
                let code = connection.api.pointee.sqlite3_prepare_v2(connection.handle, current, -1, &handle, &tail)
                guard code == SQLITE_OK else {
                    failure = connection.lastError(code)
                    return
                }
                next = tail
                guard let handle else { continue }
                let statement = SQLiteStatement(handle: handle, connection: connection)
                defer { statement.finalize() }
                do throws(SQLiteError) {
                    try statement.execute()
                } catch {
                    failure = error
                    return
                }
            }
        }
        if let failure { throw failure }
    }

    deinit { finalize() }

    func finalize() {
        guard !isFinalized else { return }
        isFinalized = true
        _ = connection.api.pointee.sqlite3_finalize(handle)
    }

    /// Runs the statement with `arguments`, ignoring any rows.
    package func execute(arguments: SQLiteArguments = []) throws(SQLiteError) {
        try bind(arguments)
        defer { reset() }
        while try step() {}
    }

    /// The statement's rows with `arguments`.
    package func rows(arguments: SQLiteArguments = []) throws(SQLiteError) -> [SQLiteRow] {
        try bind(arguments)
        defer { reset() }
        var rows: [SQLiteRow] = []
        let api = connection.api.pointee
        let count = api.sqlite3_column_count(handle)
        while try step() {
            var values: [SQLiteValue] = []
            values.reserveCapacity(Int(count))
            for column in 0..<count {
                switch api.sqlite3_column_type(handle, column) {
                case SQLITE_INTEGER: values.append(.integer(api.sqlite3_column_int64(handle, column)))
                case SQLITE_FLOAT: values.append(.real(api.sqlite3_column_double(handle, column)))
                case SQLITE_NULL: values.append(.null)
                default:
                    // Text (and a blob, which the journal never writes) as UTF-8.
                    let bytes = api.sqlite3_column_text(handle, column)
                    let length = Int(api.sqlite3_column_bytes(handle, column))
                    let text = bytes.map { String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self) } ?? ""
                    values.append(.text(text))
                }
            }
            rows.append(SQLiteRow(values: values))
        }
        return rows
    }

    private func step() throws(SQLiteError) -> Bool {
        let code = connection.api.pointee.sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw connection.lastError(code)
        }
    }

    private func reset() {
        _ = connection.api.pointee.sqlite3_reset(handle)
        _ = connection.api.pointee.sqlite3_clear_bindings(handle)
    }

    private func bind(_ arguments: SQLiteArguments) throws(SQLiteError) {
        let api = connection.api.pointee
        let expected = Int(api.sqlite3_bind_parameter_count(handle))
        guard arguments.values.count == expected else {
            throw SQLiteError(
                code: SQLiteError.range, message: "\(arguments.values.count) arguments for a statement of \(expected)"
            )
        }
        for (offset, value) in arguments.values.enumerated() {
            let index = Int32(offset + 1)
            let code =
                switch value {
                case .null: api.sqlite3_bind_null(handle, index)
                case .integer(let integer): api.sqlite3_bind_int64(handle, index, integer)
                case .real(let real): api.sqlite3_bind_double(handle, index, real)
                case .text(let text):
                    text.withCString { api.sqlite3_bind_text(handle, index, $0, -1, csqlite_transient()) }
                }
            guard code == SQLITE_OK else { throw connection.lastError(code) }
        }
    }
}
