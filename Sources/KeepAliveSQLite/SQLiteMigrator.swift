/// A schema's migrations, each applied once, in order, in a transaction of its own, and noted
/// in a table of the database by its identifier.
///
/// The table is `grdb_migrations`, GRDB's (`identifier TEXT NOT NULL PRIMARY KEY`): the journal
/// was kept through GRDB until version 0.9, and its files open with either.
package struct SQLiteMigrator: Sendable {
    package static let table = "grdb_migrations"

    private var steps: [(identifier: String, migrate: @Sendable (SQLiteConnection) throws -> Void)] = []

    package init() {}

    /// The identifiers, in the order they apply.
    package var migrations: [String] { steps.map(\.identifier) }

    /// Adds a migration after those registered so far.
    package mutating func registerMigration(_ identifier: String, migrate: @escaping @Sendable (SQLiteConnection) throws -> Void) {
        precondition(!migrations.contains(identifier), "migration \(identifier) registered twice")
        steps.append((identifier, migrate))
    }

    /// The identifiers the database says were applied (none when it has no table for them).
    package func appliedIdentifiers(_ db: SQLiteConnection) throws -> Set<String> {
        guard try db.tableExists(Self.table) else { return [] }
        return Set(try String.fetchAll(db, sql: "SELECT identifier FROM \(Self.table)"))
    }

    /// Whether the database had a migration applied that this migrator does not know: a newer
    /// version's file.
    package func hasBeenSuperseded(_ db: SQLiteConnection) throws -> Bool {
        !(try appliedIdentifiers(db).isSubset(of: migrations))
    }

    /// Applies the migrations `database` lacks. Foreign keys are off while each runs (a table
    /// rebuilt is dropped and renamed), and checked before its commit.
    package func migrate(_ database: SQLiteDatabase) throws {
        try database.withoutTransaction { db in
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS \(Self.table) (identifier TEXT NOT NULL PRIMARY KEY)")
        }
        let applied = try database.read { db in try appliedIdentifiers(db) }
        for step in steps where !applied.contains(step.identifier) {
            try database.withoutTransaction { db in try db.execute(sql: "PRAGMA foreign_keys = OFF") }
            defer { _ = try? database.withoutTransaction { db in try db.execute(sql: "PRAGMA foreign_keys = ON") } }
            try database.write { db in
                // Another process may have applied it since it was read.
                guard try Bool.fetchOne(db, sql: "SELECT 1 FROM \(Self.table) WHERE identifier = ?", arguments: [step.identifier]) == nil
                else { return }
                try step.migrate(db)
                if let violation = try SQLiteRow.fetchOne(db, sql: "PRAGMA foreign_key_check") {
                    throw SQLiteError(
                        code: SQLiteError.corrupt,
                        message: "migration \(step.identifier) broke a foreign key (table \(try violation[0] as String))"
                    )
                }
                try db.execute(sql: "INSERT INTO \(Self.table) (identifier) VALUES (?)", arguments: [step.identifier])
            }
        }
    }
}
