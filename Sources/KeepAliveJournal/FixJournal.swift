public import FoundationEssentials
package import Dispatch
import KeepAliveSQLite
import Glibc
public import Logging
public import KeepAliveCore
public import KeepAliveMonitoring

/// Every fix, durable on disk in order: a SQLite database in WAL mode, one row
/// a fix with a sequence number and a stable id, and a queue per delivery destination.
///
/// ```swift
/// let journal = try FixJournal(file: FixJournal.defaultFile)
/// let record = try journal.append(fix)   // on the disk once this returns
/// ```
///
/// Each commit is fsynced before it returns (`synchronous = FULL`, read back on every
/// connection), so a power cut loses no fix an append returned. A service records through a
/// ``JournalWriter``, which groups fixes into fewer commits to spare flash storage.
///
/// A file that is damaged or was written by a newer version is never changed: opening it throws.
/// Several processes can share one journal (the service and `keepalive upload`).
///
/// Its methods read and write on the calling thread, and a commit waits for the disk (a second
/// or more on an SD card): async code awaits ``perform(_:)`` instead, which runs them on the
/// journal's own queue, as a ``JournalWriter`` runs its commits.
public final class FixJournal: Sendable {
    /// The journal file.
    public let file: URL
    /// The journal file's path, for SQLite and messages.
    var filePath: String { file.path }
    /// How much is kept: age, count and bytes.
    public let retention: JournalRetention
    /// How a ``JournalWriter`` on this journal groups its commits unless told otherwise. The
    /// journal's own appends are each on the disk when they return, whatever this says.
    public let durability: JournalDurability
    /// Whether this journal writes (``Access/readWrite``) or only reads its file.
    public let access: Access
    /// Whether each fix's own time is compared with the system clock when it arrives.
    public let comparesClocks: Bool
    let database: SQLiteDatabase
    package let now: @Sendable () -> Date
    let battery: @Sendable () -> Int?
    let logger: Logger
    private let observers = Locked([Int: AsyncStream<Int64>.Continuation]())
    /// Where ``perform(_:)`` and a ``JournalWriter``'s commits run, one at a time: a thread of
    /// Dispatch's that may wait for the disk, never one of the concurrency pool's.
    package let queue: DispatchQueue
    /// Set on ``queue``: whether the calling thread is running its work.
    private let onQueueKey: DispatchSpecificKey<Bool>
    /// Where a ``JournalWriter``'s reads for delivery run (what to send next, how many wait),
    /// one at a time, on a connection of their own: in WAL mode a read sees the last commit and
    /// never waits for the one in flight, which on a card that stalls can take seconds.
    package let readQueue: DispatchQueue
    /// Set on ``readQueue``: whether the calling thread is running its work (its reads then go
    /// to ``readConnection``).
    private let onReadQueueKey: DispatchSpecificKey<Bool>
    /// The connection of ``readQueue``, opened at its first read (used on that queue only).
    private let readConnection = Locked<SQLiteDatabase?>(nil)
    private let appendsSinceRetention = Locked(0)

    /// Opens the journal in `file`, creating it (mode 0600, its folder 0700) if it does not exist.
    /// - Parameters:
    ///   - access: ``Access/readOnly`` reads the file as it is and never writes to it (no
    ///     retention, no layout upgrade): what `journal status` and `export` open.
    ///   - comparesClocks: compare each fix's own time with the system clock when it arrives
    ///     (``SystemClockOffset``); `false` for fixes that are not live, such as a replay of an
    ///     old log, whose times say nothing of the system clock.
    public init(
        file: URL,
        access: Access = .readWrite,
        retention: JournalRetention = JournalRetention(),
        durability: JournalDurability = .full,
        comparesClocks: Bool = true,
        now: @escaping @Sendable () -> Date = { Date() },
        battery: @escaping @Sendable () -> Int? = PowerSupply.cachedBatteryLevel(),
        logger: Logger = Logger(label: "LocationKeepAlive.journal")
    ) throws(JournalError) {
        self.file = file
        let path = file.path
        self.access = access
        self.retention = retention
        self.durability = durability
        self.comparesClocks = comparesClocks
        self.now = now
        self.battery = battery
        self.logger = logger
        let (queue, onQueueKey) = (DispatchQueue(label: "LocationKeepAlive.journal"), DispatchSpecificKey<Bool>())
        queue.setSpecific(key: onQueueKey, value: true)
        (self.queue, self.onQueueKey) = (queue, onQueueKey)
        let (readQueue, onReadQueueKey) = (DispatchQueue(label: "LocationKeepAlive.journal.reads"), DispatchSpecificKey<Bool>())
        readQueue.setSpecific(key: onReadQueueKey, value: true)
        (self.readQueue, self.onReadQueueKey) = (readQueue, onReadQueueKey)
        if access == .readOnly {
            database = try Self.openForReading(path)
            return
        }
        try Self.prepareFile(at: path)
        do {
            try Self.inspect(path)  // read-only first: switching to WAL writes the file's header
            database = try SQLiteDatabase(path: path) { db in try Self.prepareConnection(db, path: path) }
            do {
                try JournalSchema.migrator.migrate(database)
            } catch {
                // Two processes creating one journal at once: the second sees the first's schema.
                try JournalSchema.migrator.migrate(database)
            }
        } catch let error as JournalError {
            throw error
        } catch {
            throw Self.journalError(error, path: path)
        }
        // Retention writes: on a full disk the journal still opens (to read, export, deliver).
        do { try applyRetention() } catch { logger.warning("journal retention could not run", metadata: ["error": "\(error)"]) }
    }

    /// `$XDG_STATE_HOME/keepalive/journal.sqlite` (`~/.local/state/...` without it).
    public static var defaultFile: URL {
        BaseDirectory.state().appendingPathComponent("keepalive/journal.sqlite")
    }

    /// Opens the journal at `path`: use ``init(file:access:retention:durability:comparesClocks:now:battery:logger:)``.
    @available(*, deprecated, renamed: "init(file:access:retention:durability:comparesClocks:now:battery:logger:)")
    public convenience init(path: String, retention: JournalRetention = JournalRetention(), durability: JournalDurability = .full)
        throws(JournalError)
    {
        try self.init(file: URL(fileURLWithPath: path), retention: retention, durability: durability)
    }

    /// The default journal's path: use ``defaultFile``.
    @available(*, deprecated, renamed: "defaultFile")
    public static var defaultPath: String { defaultFile.path }

    /// The journal file's path: use ``file``.
    @available(*, deprecated, renamed: "file")
    public var path: String { file.path }

    /// Stores a fix; it is on the disk when this returns.
    @discardableResult
    public func append(_ location: Location) throws(JournalError) -> JournalRecord {
        try append(contentsOf: [location])[0]
    }

    /// What an append stores: a fix, or the event it decided, and when it reached the service
    /// by the system clock (a ``JournalWriter`` holds fixes a while before it stores them).
    struct Entry {
        var location: Location
        var event: MonitorEvent?
        var arrived: Date
        /// The record's id, given as it arrives: a record a ``JournalWriter`` lets a destination
        /// send before its commit keeps it in the journal.
        var id: String
        /// The battery's charge when it arrived; `nil`: read at the commit.
        var battery: Int?
        /// Told once the entry is stored (``JournalWriter/record(_:then:)`` in `full`), or
        /// once its commit failed: nothing is held back from being told for long.
        var tell: (@Sendable () -> Void)?

        init(location: Location, event: MonitorEvent? = nil, arrived: Date, battery: Int? = nil) {
            self.location = location
            self.event = event
            self.arrived = arrived
            self.id = RecordID.make(at: arrived)
            self.battery = battery
        }
    }

    /// Stores fixes in one transaction, in order.
    @discardableResult
    public func append(contentsOf locations: [Location]) throws(JournalError) -> [JournalRecord] {
        let arrived = now()
        return try append(entries: locations.map { Entry(location: $0, arrived: arrived) })
    }

    /// Stores a location event after the fixes stored so far; its record's `location` is the
    /// fix that decided it. On the disk when this returns.
    /// Destinations send it in order with the fixes (OwnTracks as a `transition`, for a region).
    @discardableResult
    public func append(_ event: MonitorEvent) throws(JournalError) -> JournalRecord {
        try append(entries: [Entry(location: event.location, event: event, arrived: now())])[0]
    }

    /// Stores fixes and events in one transaction, in order, and with them how far each
    /// destination in `delivered` was delivered (a ``JournalWriter``'s records sent before their
    /// commit): the cursors move in the same commit as the records they point at, and the
    /// leases of `lease`'s owner are renewed.
    func append(
        entries: [Entry], delivered: [String: DeliveredPosition] = [:], renewing lease: (owner: String, ttl: Duration)? = nil
    ) throws(JournalError) -> [JournalRecord] {
        guard !entries.isEmpty || !delivered.isEmpty else { return [] }
        let battery = entries.contains { $0.battery == nil } ? battery() : nil
        let records: [JournalRecord]
        do {
            records = try database.write { db in
                let insert = try db.cachedStatement(sql: JournalSchema.insertFix)
                let records = try entries.map { entry in
                    let record = record(of: entry, battery: entry.battery ?? battery)
                    try insert.execute(
                        arguments: JournalSchema.arguments(
                            entry.location, event: entry.event, id: entry.id, recordedAt: entry.arrived, battery: record.battery,
                            clockOffset: record.systemClockOffset
                        )
                    )
                    var stored = record
                    stored.sequence = db.lastInsertedRowID
                    return stored
                }
                try Self.saveCursors(delivered, records: records, at: now().timeIntervalSince1970, renewing: lease, in: db)
                return records
            }
        } catch {
            throw Self.journalError(error, path: filePath)
        }
        guard let last = records.last else { return [] }
        notify(last.sequence)
        let due = appendsSinceRetention.withLock { count in
            count += records.count
            guard count >= 256 else { return false }
            count = 0
            return true
        }
        if due { try applyRetention() }
        return records
    }

    /// `entry` as a record not yet stored: sequence number 0 (see ``JournalRecord/isStored``).
    func record(of entry: Entry, battery: Int?) -> JournalRecord {
        let offset = comparesClocks ? SystemClockOffset(fixTime: entry.location.timestamp, systemTime: entry.arrived) : nil
        let recordedAt = offset.map { $0.isBeyondTolerance ? entry.arrived.addingTimeInterval(-$0.seconds) : entry.arrived }
        return JournalRecord(
            sequence: 0, id: entry.id, location: entry.location, recordedAt: recordedAt ?? entry.arrived,
            battery: battery, event: entry.event, systemClockOffset: offset
        )
    }

    /// Up to `limit` records (fixes and events) after `sequence`, in order.
    public func records(after sequence: Int64, limit: Int = 1_000) throws(JournalError) -> [JournalRecord] {
        try read { db in
            try SQLiteRow.fetchAll(db, sql: JournalSchema.selectFix + " WHERE seq > ? ORDER BY seq LIMIT ?", arguments: [sequence, limit])
                .map(JournalSchema.record)
        }
    }

    /// Calls `body` with every record (fixes and events) whose fix time is in `from...to` (all
    /// when `nil`), in order, reading in pages so memory stays constant whatever the journal's size.
    public func forEachRecord(
        from: Date? = nil,
        to: Date? = nil,
        _ body: (JournalRecord) throws -> Void
    ) throws {
        try forEachRecord(from: from, to: to, eventsOnly: false, body)
    }

    /// The events among the records of ``forEachRecord(from:to:_:)``, in order.
    public func forEachEvent(
        from: Date? = nil,
        to: Date? = nil,
        _ body: (JournalRecord) throws -> Void
    ) throws {
        try forEachRecord(from: from, to: to, eventsOnly: true, body)
    }

    private func forEachRecord(
        from: Date?,
        to: Date?,
        eventsOnly: Bool,
        _ body: (JournalRecord) throws -> Void
    ) throws {
        var after: Int64 = 0
        let lower = from?.timeIntervalSince1970 ?? -.infinity
        let upper = to?.timeIntervalSince1970 ?? .infinity
        while true {
            let page = try read { db in
                try SQLiteRow.fetchAll(
                    db,
                    sql: JournalSchema.selectFix
                        + " WHERE seq > ? AND coalesce(fixTime, recordedAt) BETWEEN ? AND ?"
                        + (eventsOnly ? " AND event IS NOT NULL" : "") + " ORDER BY seq LIMIT 2000",
                    arguments: [after, lower, upper]
                ).map(JournalSchema.record)
            }
            for record in page { try body(record) }
            guard let last = page.last, page.count == 2000 else { return }
            after = last.sequence
        }
    }

    /// The sequence number of each append from now on (the newest when several came together).
    /// Within this process only; other processes see new records by reading.
    public func appends() -> AsyncStream<Int64> {
        let (stream, continuation) = AsyncStream.makeStream(of: Int64.self, bufferingPolicy: .bufferingNewest(1))
        let key = observers.withLock { observers in
            let key = (observers.keys.max() ?? 0) + 1
            observers[key] = continuation
            return key
        }
        continuation.onTermination = { [weak self] _ in self?.observers.withLock { _ = $0.removeValue(forKey: key) } }
        return stream
    }

    private func notify(_ sequence: Int64) {
        for continuation in observers.withLock({ Array($0.values) }) { continuation.yield(sequence) }
    }

    /// Runs `body` with this journal on the journal's own queue, after the work queued before it
    /// (a writer's commits among it), and returns its result: what async code awaits to read or
    /// write, so that no thread of the concurrency pool waits for the disk.
    public func perform<Value: Sendable, Failure: Error>(
        _ body: @escaping @Sendable (FixJournal) throws(Failure) -> Value
    ) async throws(Failure) -> Value {
        try await queue.awaiting { () throws(Failure) -> Value in try body(self) }
    }

    /// Runs `body`, which only reads, on the journal's read queue (``readQueue``) and returns its
    /// result: its reads see the last commit and never wait for one in flight.
    package func performReading<Value: Sendable, Failure: Error>(
        _ body: @escaping @Sendable (FixJournal) throws(Failure) -> Value
    ) async throws(Failure) -> Value {
        try await readQueue.awaiting { () throws(Failure) -> Value in try body(self) }
    }

    /// Runs `body` on the journal's queue and waits for it, or at once when already on it: for
    /// the synchronous API of a ``JournalWriter``, whose commits run there.
    func onQueue<Value, Failure: Error>(_ body: () throws(Failure) -> Value) throws(Failure) -> Value {
        if DispatchQueue.getSpecific(key: onQueueKey) == true { return try body() }
        let result: Result<Value, Failure> = queue.sync {
            do throws(Failure) { return .success(try body()) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// A read in one snapshot: on ``readQueue`` through its own connection, elsewhere through
    /// the journal's.
    func read<T>(_ body: (SQLiteConnection) throws -> T) throws(JournalError) -> T {
        do {
            return try readingDatabase().read(body)
        } catch let error as JournalError {
            throw error
        } catch {
            throw Self.journalError(error, path: filePath)
        }
    }

    private func readingDatabase() throws(JournalError) -> SQLiteDatabase {
        guard access == .readWrite, DispatchQueue.getSpecific(key: onReadQueueKey) == true else { return database }
        if let open = readConnection.read({ $0 }) { return open }
        do {
            // Read-only, on the file the journal's connection keeps in WAL mode (its -shm there).
            let opened = try SQLiteDatabase(path: filePath, readOnly: true)
            readConnection.withLock { $0 = opened }
            return opened
        } catch {
            throw Self.journalError(error, path: filePath)
        }
    }

    /// Runs `body` on ``readQueue`` and waits for it (its reads see the last commit, not waiting
    /// for one in flight), or at once when already there.
    func onReadQueue<Value, Failure: Error>(_ body: () throws(Failure) -> Value) throws(Failure) -> Value {
        if DispatchQueue.getSpecific(key: onReadQueueKey) == true { return try body() }
        let result: Result<Value, Failure> = readQueue.sync {
            do throws(Failure) { return .success(try body()) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// A write other than storing fixes (the delivery cursor, retention): a full disk is said
    /// as such, never as a fix not stored, which would count a fix lost that is not.
    func write<T>(_ body: (SQLiteConnection) throws -> T) throws(JournalError) -> T {
        try write(synced: true, body)
    }

    /// ``write(_:)``, its commit synced to the disk or not (``SQLiteDatabase/writeUnsynced(_:)``:
    /// what only running processes share, a lease).
    func write<T>(synced: Bool, _ body: (SQLiteConnection) throws -> T) throws(JournalError) -> T {
        do {
            return try synced ? database.write(body) : database.writeUnsynced(body)
        } catch {
            let translated = Self.journalError(error, path: filePath)
            guard case .diskFull(let path) = translated else { throw translated }
            throw .database(
                path: path,
                detail: "the disk is full: the change was not saved (no fix was lost); free some space"
            )
        }
    }
}

extension FixJournal: FixRecorder, MonitorEventRecorder {
    /// Appends `fix`: a fix record.
    public func record(_ fix: Location) throws { _ = try append(fix) }

    /// Appends `event`: an event record, after the fixes stored so far.
    public func record(_ event: MonitorEvent) throws { _ = try append(event) }

    /// Marks a gap after the records stored so far.
    public func recordGap(from start: Date, to end: Date, reason: String) throws {
        try markGap(from: start, to: end, reason: reason)
    }
}
