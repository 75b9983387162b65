import CSQLite

/// What SQLite reported: its (extended) result code and message.
package struct SQLiteError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The extended result code (`SQLITE_IOERR_FSYNC`, ...).
    package let code: Int32
    /// SQLite's own message (`sqlite3_errmsg`), or ours for a value that does not convert.
    package let message: String

    package init(code: Int32, message: String) {
        self.code = code
        self.message = message
    }

    /// The primary result code (`SQLITE_IOERR` for `SQLITE_IOERR_FSYNC`); ``notLoaded`` as it is.
    package var primaryCode: Int32 { code < 0 ? code : code & 0xff }

    package var description: String { "\(message) (SQLite code \(code))" }

    // The primary codes a caller tells apart.
    package static let permission = SQLITE_PERM
    package static let busy = SQLITE_BUSY
    package static let readOnly = SQLITE_READONLY
    package static let ioError = SQLITE_IOERR
    package static let corrupt = SQLITE_CORRUPT
    package static let full = SQLITE_FULL
    package static let cannotOpen = SQLITE_CANTOPEN
    package static let mismatch = SQLITE_MISMATCH
    package static let authorization = SQLITE_AUTH
    package static let range = SQLITE_RANGE
    package static let notADatabase = SQLITE_NOTADB
    /// Not SQLite's: libsqlite3 could not be loaded.
    package static let notLoaded: Int32 = -1
}
