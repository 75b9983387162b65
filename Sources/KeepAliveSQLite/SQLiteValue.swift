/// One value of a row or of an argument, as SQLite stores it.
package enum SQLiteValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
}

/// A Swift value that can be bound to a statement's `?`.
package protocol SQLiteBindable {
    /// The value as SQLite stores it.
    var sqliteValue: SQLiteValue { get }
}

/// A Swift value a column can be read as; each conversion that could lose or invent a value
/// throws instead (NULL for a non-optional, text for a number).
package protocol SQLiteColumn {
    /// The column's `value` as this type, or why it cannot be.
    init(sqlite value: SQLiteValue) throws(SQLiteError)
}

extension SQLiteValue {
    func mismatch(_ type: String) -> SQLiteError {
        SQLiteError(code: SQLiteError.mismatch, message: "a column holds \(self), not \(type)")
    }
}

extension Int64: SQLiteBindable, SQLiteColumn {
    package var sqliteValue: SQLiteValue { .integer(self) }

    package init(sqlite value: SQLiteValue) throws(SQLiteError) {
        switch value {
        case .integer(let integer): self = integer
        case .real(let real):
            guard let exact = Int64(exactly: real) else { throw value.mismatch("an integer") }
            self = exact
        default: throw value.mismatch("an integer")
        }
    }
}

extension Int: SQLiteBindable, SQLiteColumn {
    package var sqliteValue: SQLiteValue { .integer(Int64(self)) }

    package init(sqlite value: SQLiteValue) throws(SQLiteError) {
        self = Int(try Int64(sqlite: value))
    }
}

extension Int32: SQLiteBindable {
    package var sqliteValue: SQLiteValue { .integer(Int64(self)) }
}

extension Double: SQLiteBindable, SQLiteColumn {
    package var sqliteValue: SQLiteValue { .real(self) }

    package init(sqlite value: SQLiteValue) throws(SQLiteError) {
        switch value {
        case .integer(let integer): self = Double(integer)
        case .real(let real): self = real
        default: throw value.mismatch("a number")
        }
    }
}

extension Bool: SQLiteBindable, SQLiteColumn {
    package var sqliteValue: SQLiteValue { .integer(self ? 1 : 0) }

    package init(sqlite value: SQLiteValue) throws(SQLiteError) {
        self = try Double(sqlite: value) != 0
    }
}

extension String: SQLiteBindable, SQLiteColumn {
    package var sqliteValue: SQLiteValue { .text(self) }

    /// Text, or a number as SQLite writes it as text (what a `PRAGMA` answers).
    package init(sqlite value: SQLiteValue) throws(SQLiteError) {
        switch value {
        case .text(let text): self = text
        case .integer(let integer): self = String(integer)
        default: throw value.mismatch("text")
        }
    }
}

extension Optional: SQLiteBindable where Wrapped: SQLiteBindable {
    package var sqliteValue: SQLiteValue { self?.sqliteValue ?? .null }
}

extension Optional: SQLiteColumn where Wrapped: SQLiteColumn {
    package init(sqlite value: SQLiteValue) throws(SQLiteError) {
        self = value == .null ? nil : try Wrapped(sqlite: value)
    }
}

/// The values bound to a statement's `?`s, in order: `[name, 3, nil]`.
package struct SQLiteArguments: Sendable, ExpressibleByArrayLiteral {
    package var values: [SQLiteValue]

    package init(_ values: [SQLiteValue]) { self.values = values }

    package init(arrayLiteral elements: (any SQLiteBindable)?...) {
        values = elements.map { $0?.sqliteValue ?? .null }
    }

    package static func + (lhs: SQLiteArguments, rhs: SQLiteArguments) -> SQLiteArguments {
        SQLiteArguments(lhs.values + rhs.values)
    }
}

/// One row a query returned, its columns by position.
package struct SQLiteRow: Sendable {
    package let values: [SQLiteValue]

    /// Column `index` as `T`; throws when the column is missing or holds something else.
    package subscript<T: SQLiteColumn>(index: Int) -> T {
        get throws(SQLiteError) {
            guard values.indices.contains(index) else {
                throw SQLiteError(code: SQLiteError.range, message: "no column \(index) in a row of \(values.count)")
            }
            return try T(sqlite: values[index])
        }
    }
}
