import FoundationEssentials
import KeepAliveSQLite
import Glibc

extension FixJournal {
    /// Whether a ``FixJournal`` writes its file.
    public enum Access: Sendable, Hashable {
        /// Stores fixes, runs retention, brings an older layout up to date.
        case readWrite
        /// Reads the file as it is and never writes to it, whatever its layout; a file that
        /// does not exist is not created.
        case readOnly
    }

    /// A connection that only reads `path`: checked as ``inspect(_:)`` checks it, and with an
    /// older layout read through ``JournalSchema/viewOfOlderLayout(_:)``.
    static func openForReading(_ path: String) throws(JournalError) -> SQLiteDatabase {
        guard Glibc.access(path, F_OK) == 0 else {
            throw .unavailable(path: path, detail: "there is no journal there: nothing was recorded with it yet")
        }
        do {
            try inspect(path)
            return try SQLiteDatabase(path: path, readOnly: true, prepare: JournalSchema.viewOfOlderLayout)
        } catch {
            throw journalError(error, path: path)
        }
    }

    /// Creates the folder (0700) and the file (0600) when missing, so SQLite never creates it
    /// with the umask's permissions. An existing file is checked by ``inspect(_:)``, through
    /// SQLite: a descriptor of our own on a journal this process already has open would, when
    /// closed, drop SQLite's locks on it (POSIX advisory locks belong to the process).
    static func prepareFile(at path: String) throws(JournalError) {
        let folder = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? ""
        if !folder.isEmpty, !FileManager.default.fileExists(atPath: folder) {
            do {
                try FileManager.default.createDirectory(
                    atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700]
                )
            } catch {
                throw .unavailable(path: path, detail: "cannot create its folder \(folder): \(error)")
            }
        }
        guard Glibc.access(path, F_OK) != 0 else { return }
        try create(at: path, folder: folder.isEmpty ? "." : folder)
    }

    /// Makes a new journal, its whole layout, in as few syncs as a file can be made durable in:
    /// built unsynced beside `path` (its migrations in memory, no rollback journal), then one
    /// fsync of the file, a link to `path` and one fsync of the folder. Built in place, each
    /// migration, the switch to WAL and the WAL's creation synced on their own: 13 syncs, 55 s
    /// on a card that takes a second a write (scripts/slow-disk --first-start). A process that
    /// made `path` meanwhile wins; this one opens what it made.
    private static func create(at path: String, folder: String) throws(JournalError) {
        removeDraftsOfProcessesGone(besides: path, in: folder)
        // Of this process and this call: two threads of one process may make it at once.
        let draft = "\(path).new-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { unlink(draft) }
        let descriptor = open(draft, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .unavailable(path: path, detail: String(cString: strerror(errno))) }
        close(descriptor)
        do {
            let database = try SQLiteDatabase(path: draft) { db in
                try db.execute(sql: "PRAGMA page_size = 1024; PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF")
            }
            try JournalSchema.migrator.migrate(database)
            try database.withoutTransaction { db in try db.execute(sql: "PRAGMA journal_mode = WAL") }
            database.close()
        } catch {
            throw journalError(error, path: path)
        }
        try sync(draft, path: path)
        if link(draft, path) != 0, errno != EEXIST {
            // A filesystem without hard links (vfat): a rename, which a racing creator's file
            // would lose to; both are new and empty of fixes.
            guard rename(draft, path) == 0 else { throw .unavailable(path: path, detail: String(cString: strerror(errno))) }
        }
        try sync(folder, path: path)
    }

    /// Removes the drafts beside `path` left by processes that no longer run (cut off while
    /// making the journal): `NAME.new-PID-N`.
    private static func removeDraftsOfProcessesGone(besides path: String, in folder: String) {
        let prefix = (path.split(separator: "/").last.map(String.init) ?? path) + ".new-"
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] where name.hasPrefix(prefix) {
            guard let pid = Int32(name.dropFirst(prefix.count).prefix { $0 != "-" }), kill(pid, 0) == -1, errno == ESRCH else { continue }
            unlink("\(folder)/\(name)")
        }
    }

    /// fsyncs the file or folder at `target`.
    private static func sync(_ target: String, path: String) throws(JournalError) {
        let descriptor = open(target, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .unavailable(path: path, detail: "\(target): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else {
            throw errno == ENOSPC ? .diskFull(path: path) : .unavailable(path: path, detail: "fsync: \(String(cString: strerror(errno)))")
        }
    }

    /// Refuses, without writing to it, a journal from a newer version and a SQLite database
    /// that is not a journal.
    static func inspect(_ path: String) throws {
        // Waiting up to 10 s for a lock: another process may be creating the journal now.
        let database = try SQLiteDatabase(path: path, readOnly: true)
        try database.read { db in
            if try JournalSchema.migrator.hasBeenSuperseded(db) {
                let known = Set(JournalSchema.migrator.migrations)
                let unknown = try JournalSchema.migrator.appliedIdentifiers(db).subtracting(known)
                throw JournalError.newerVersion(path: path, unknown: unknown.sorted())
            }
            let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'")
            if !tables.isEmpty, !tables.contains("grdb_migrations") {
                throw JournalError.damaged(
                    path: path, detail: "a SQLite database but not a journal (tables: \(tables.joined(separator: ", ")))"
                )
            }
        }
        database.close()
    }

    /// Whether the filesystem holding `path` refuses writes now: mounted read-only, or turned so
    /// by an error (ext4's `errors=remount-ro` now marks it `emergency_ro`, which `statvfs` and
    /// `access` do not show: only a write is refused, with EROFS). Probed with a file of its own
    /// beside the journal: a descriptor of ours on the journal itself would, closed, drop
    /// SQLite's locks on it. Asked only after a write failed.
    static func isOnReadOnlyFilesystem(_ path: String) -> Bool {
        var status = statvfs()
        if statvfs(path, &status) == 0, status.f_flag & UInt(ST_RDONLY) != 0 { return true }
        let probe = "\(path).probe-\(getpid())"
        let descriptor = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return errno == EROFS }
        close(descriptor)
        unlink(probe)
        return false
    }

    /// A SQLite error as a journal error that names the file.
    static func journalError(_ error: any Error, path: String) -> JournalError {
        if let error = error as? JournalError { return error }
        guard let error = error as? SQLiteError else {
            return .database(path: path, detail: "\(error)")
        }
        let detail = error.message
        // SQLite says "disk I/O error" (or "attempt to write a readonly database") for a
        // filesystem remounted read-only; the filesystem says which.
        if error.primaryCode == SQLiteError.ioError || error.primaryCode == SQLiteError.readOnly, isOnReadOnlyFilesystem(path) {
            return .readOnlyFilesystem(path: path)
        }
        switch error.primaryCode {
        case SQLiteError.notADatabase, SQLiteError.corrupt: return .damaged(path: path, detail: detail)
        case SQLiteError.full: return .diskFull(path: path)
        case SQLiteError.cannotOpen, SQLiteError.readOnly, SQLiteError.permission, SQLiteError.authorization, SQLiteError.notLoaded:
            return .unavailable(path: path, detail: detail)
        default: return .database(path: path, detail: detail)
        }
    }
}

extension FixJournal {
    /// What every connection that writes the journal is set to, as `PRAGMA name` reads back:
    /// WAL, and each commit fsynced before it returns (`synchronous` 2, FULL), so a commit that
    /// returned survives a power cut.
    static let connectionSettings: KeyValuePairs<String, String> = ["journal_mode": "wal", "synchronous": "2"]

    /// Sets ``connectionSettings`` on a new connection and reads each back: a library default
    /// that undoes one (as GRDB's WAL set-up once did, when the journal was kept through it) fails the open instead of losing fixes.
    static func prepareConnection(_ db: SQLiteConnection, path: String) throws {
        // 1 KB pages for a new journal (an existing one keeps its own): a group commit writes
        // each page it touches whole, and a fix is about 150 bytes. A page cache of 256 KiB, not
        // SQLite's 2 MB: a service appends a page every few fixes and keeps each in the cache, so
        // its memory grew by the cache for an hour; the journal's readers want the newest pages.
        try db.execute(
            sql: "PRAGMA page_size = 1024; PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA cache_size = -256"
        )
        let inEffect = try settings(of: db)
        for (pragma, wanted) in connectionSettings where inEffect[pragma] != wanted {
            throw JournalError.database(
                path: path, detail: "PRAGMA \(pragma) is \(inEffect[pragma] ?? "unset"), not \(wanted): the journal cannot be durable"
            )
        }
    }

    private static func settings(of db: SQLiteConnection) throws -> [String: String] {
        var settings: [String: String] = [:]
        for (pragma, _) in connectionSettings {
            settings[pragma] = try String.fetchOne(db, sql: "PRAGMA \(pragma)")
        }
        return settings
    }

    /// The ``connectionSettings`` read back from the journal's connection: what its tests check.
    package func connectionSettingsInEffect() throws(JournalError) -> [String: String] {
        try read { db in try Self.settings(of: db) }
    }

    /// The most SQLite's page cache holds for the journal's connection, in KiB (`cache_size`,
    /// which counts KiB when negative and pages otherwise).
    package func pageCacheLimitKiB() throws(JournalError) -> Int {
        try read { db in
            let size = try Int.fetchOne(db, sql: "PRAGMA cache_size") ?? 0
            let page = try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 4096
            return size < 0 ? -size : size * page / 1024
        }
    }
}

extension FixJournal {
    /// Makes the journal's connection refuse writes (`PRAGMA query_only`), as a filesystem
    /// remounted read-only does: what tests of a journal that cannot be written use.
    package func refuseWrites(_ refuse: Bool) throws(JournalError) {
        do {
            try database.withoutTransaction { db in try db.execute(sql: "PRAGMA query_only = \(refuse ? 1 : 0)") }
        } catch {
            throw Self.journalError(error, path: filePath)
        }
    }
}
