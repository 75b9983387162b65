public import FoundationEssentials
import Dispatch
public import KeepAliveCore
public import KeepAliveMonitoring

/// Records a service's fixes and events in a journal, a commit at a time as its
/// ``JournalDurability`` says, and keeps them in memory while the journal cannot be written
/// (a full disk, a filesystem remounted read-only), committing them when it can again.
///
/// ```swift
/// let writer = JournalWriter(journal: journal, durability: .grouped) { report in print(report) }
/// async let commits: Void = writer.run()   // commits each group when its interval is up
/// writer.record(fix)                       // held, then stored with its group
/// ```
///
/// A fix counts as stored when a ``Report/stored(_:)`` names it: only then is it on the disk.
/// Commits run on the journal's own queue (``FixJournal/perform(_:)``): a fix handed over costs
/// a lock, whatever the disk is doing, and a commit that waits a second for a slow card holds
/// neither the source that reads the receiver nor any thread of the concurrency pool. In
/// ``JournalDurability/full``, whose promise is a fix on the disk before it is told,
/// ``record(_:then:)`` tells it after its commit, without the caller waiting (fixes that come
/// meanwhile share the next commit); `record(_:)` waits on the calling thread. Async code awaits
/// the async forms of `commit()`, `pending(for:limit:)` and `waiting(for:)`; their
/// synchronous forms wait on the calling thread, for code that has one of its own.
/// Nothing is dropped silently: past ``capacity`` fixes held, the oldest go, and
/// ``Report/dropped(count:error:)`` says how many. ``tally`` says at any time (a stop's last
/// line) how many fixes were stored, how many are held, and why.
///
/// Delivery need not wait for a commit: a deliverer reads `pending(for:limit:)`, which goes on
/// from the stored records to those held here, and tells ``acknowledge(_:by:)`` what its server
/// took. What was delivered is stored with the next commit, in the same transaction as the
/// records, so a destination's cursor costs no write of its own (the journaling article says what
/// this promises, and what a power cut can do).
public final class JournalWriter: FixRecorder, MonitorEventRecorder, PausableWork, Sendable {
    /// What the writer did, for the service's output.
    /// Printed, each says in words what happened to the fixes: stored, held (not lost), or
    /// gone.
    public enum Report: Sendable, Equatable, CustomStringConvertible {
        /// A commit returned: these records are on the disk.
        case stored(JournalCommit)
        /// The journal could not be written: `held` fixes wait in memory (none is lost, and
        /// delivery sends them from there) and are committed when it can be written again
        /// (tried every ``JournalWriter/retryInterval``).
        case holding(held: Int, error: JournalError)
        /// The oldest held fixes went, unjournaled, to keep at most ``JournalWriter/capacity``.
        case dropped(count: Int, error: JournalError)
        /// ``JournalWriter/run()`` ended (a stop) while the journal still could not be written:
        /// `held` fixes were never stored. Delivery sent them from memory: the stop's undelivered
        /// destinations (``JournalDelivery/drain(within:)``) say whether any reached none.
        case notStoredAtStop(held: Int, error: JournalError)
        /// The system clock went beyond ``SystemClockOffset/tolerance`` of the receiver's time
        /// (the fixes from now on are marked), or came back within it: said once each way.
        case systemClock(SystemClockOffset)

        /// The report in words, as `keepalive run` says it.
        public var description: String {
            switch self {
            case .stored(let commit):
                "journaled \(commit.count) (#\(commit.first)-#\(commit.last))"
            case .holding(let held, let error):
                "\(error); holding \(held) fixes in memory, not lost: journaled once the journal can be written again"
            case .dropped(let count, let error):
                "\(count) held fixes dropped unjournaled, the oldest (memory holds a bounded number): \(error)"
            case .notStoredAtStop(let held, let error):
                "stopping with \(held) fixes held in memory, never journaled (\(error)); "
                    + "delivery sent them from memory: see what it left undelivered"
            case .systemClock(let offset):
                offset.isBeyondTolerance
                    ? "the system clock is \(offset.words) the receiver's time: fixes are marked and carry the receiver's time"
                    : "the system clock agrees with the receiver's time again (\(offset.words) it)"
            }
        }
    }

    /// How many fixes (and events) this writer stored, holds and dropped: what a stop says.
    public struct Tally: Sendable, Equatable, CustomStringConvertible {
        /// Records on the disk: their commits returned.
        public var stored: Int
        /// Records in memory, not yet stored: committed with the next group, or once the journal
        /// can be written again.
        public var held: Int
        /// Held records that went past ``JournalWriter/capacity``, never stored.
        public var dropped: Int
        /// Why the journal cannot be written now, if it cannot.
        public var failure: JournalError?

        /// The tally in words: `stored 1204, held 0`, and the failure when there is one.
        public var description: String {
            var words = "stored \(stored), held \(held)"
            if dropped > 0 { words += ", dropped \(dropped)" }
            if let failure { words += " (the journal cannot be written: \(failure))" }
            return words
        }
    }

    /// The journal written to.
    public let journal: FixJournal
    /// How many fixes one commit holds.
    public let durability: JournalDurability
    /// In ``JournalDurability/grouped``, how long a group's first fix waits for its commit.
    public let commitInterval: Duration
    /// In ``JournalDurability/grouped``, a group this large is committed at once.
    public let maximumGroup: Int
    /// How many fixes are held at most while the journal cannot be written.
    public let capacity: Int
    /// How often a failed commit is tried again.
    public let retryInterval: Duration
    private let clock: any Clock<Duration>
    private let report: @Sendable (Report) -> Void
    private let state = Locked(State())
    private let wake: AsyncStream<Void>.Continuation
    private let wakes: AsyncStream<Void>
    private let holdObservers = Locked<[@Sendable () -> Void]>([])
    private let lease = Locked<(owner: String, ttl: Duration)?>(nil)

    private struct State {
        /// What is held is `entries[first...]`: dropping the oldest moves `first`, and the
        /// array is compacted once half of it is dropped, so a full queue costs no copy per fix.
        var entries: [FixJournal.Entry] = []
        var first = 0
        var failure: JournalError?
        /// What ``tally`` counts.
        var storedCount = 0, droppedCount = 0
        /// Whether the last fix compared found the system clock wrong.
        var clockWasWrong = false
        /// What each destination's server acknowledged since the last commit.
        var delivered: [String: DeliveredPosition] = [:]
        /// The sequence numbers the last commits gave, by record id: an acknowledgement of a
        /// record sent while held, which came after its commit, finds its number here.
        var committed: [String: Int64] = [:]
        /// A sequence number no record held now can be stored at or below: the last a commit of
        /// this writer gave, or the journal's last before the first count read it.
        var lastStored: Int64?

        var held: ArraySlice<FixJournal.Entry> { entries[first...] }

        mutating func dropOldest(_ count: Int) {
            first += count
            if first > entries.count / 2 {
                entries.removeFirst(first)
                first = 0
            }
        }

        mutating func removeAll() {
            entries.removeAll(keepingCapacity: true)
            first = 0
        }

        /// The tells of what is held, each given once.
        mutating func takeTells() -> [@Sendable () -> Void] {
            var tells: [@Sendable () -> Void] = []
            for index in entries.indices[first...] {
                if let tell = entries[index].tell { tells.append(tell) }
                entries[index].tell = nil
            }
            return tells
        }
    }

    /// A writer for `journal`.
    /// - Parameters:
    ///   - durability: the journal's own ``FixJournal/durability`` unless given.
    ///   - clock: what ``run()`` waits on for a group's interval and for retries.
    ///   - report: told of each commit and each storage problem, on the thread that met it.
    public init(
        journal: FixJournal,
        durability: JournalDurability? = nil,
        commitInterval: Duration = .seconds(60),
        maximumGroup: Int = 128,
        capacity: Int = 100_000,
        retryInterval: Duration = .seconds(5),
        clock: any Clock<Duration> = ContinuousClock(),
        report: @escaping @Sendable (Report) -> Void = { _ in }
    ) {
        self.journal = journal
        self.durability = durability ?? journal.durability
        self.commitInterval = commitInterval
        self.maximumGroup = max(1, maximumGroup)
        self.capacity = max(1, capacity)
        self.retryInterval = retryInterval
        self.clock = clock
        self.report = report
        (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Fixes (and events) taken and not yet stored.
    public var heldCount: Int { state.read { $0.held.count } }

    /// What this writer stored, holds and dropped so far, and why the journal cannot be written
    /// if it cannot.
    public var tally: Tally {
        state.read { Tally(stored: $0.storedCount, held: $0.held.count, dropped: $0.droppedCount, failure: $0.failure) }
    }

    /// Takes `fix`: stored before this returns in ``JournalDurability/full`` (the calling thread
    /// waits for the disk; ``record(_:then:)`` does not), with its group in
    /// ``JournalDurability/grouped`` (this returns at once, the commit on the journal's queue).
    /// Never throws: a journal that cannot be written is reported, and the fix held until it can.
    public func record(_ fix: Location) {
        hold(fix, nil)
    }

    /// Takes `fix` and calls `tell` once it may be told, never waiting for the disk: in
    /// ``JournalDurability/full`` after the commit that stores it (on the journal's queue; fixes
    /// that came meanwhile share the next commit), or as soon as that commit fails (the fix is
    /// held, as ``Report/holding(held:error:)`` says); in ``JournalDurability/grouped`` at once.
    /// What the service tells, a fix line or a poll, so follows the durability's promise while its
    /// source goes on reading.
    public func record(_ fix: Location, then tell: @escaping @Sendable () -> Void) {
        guard durability == .full else {
            hold(fix, nil)
            return tell()
        }
        hold(fix, nil, then: tell)
    }

    /// Takes `event` and commits it at once, after the fixes held before it.
    public func record(_ event: MonitorEvent) {
        hold(event.location, event)
    }

    /// What `destination` sends next, at most `limit`: the journal's
    /// ``FixJournal/pending(for:limit:)`` after what was delivered since the last commit, and
    /// once those are all sent, the records held here, not yet stored (each with sequence number
    /// 0 and the id it will be stored with). Read on the journal's read queue
    /// (`FixJournal.readQueue`): never after a commit in flight.
    public func pending(for destination: String, limit: Int) throws(JournalError) -> PendingRecords {
        try journal.onReadQueue { () throws(JournalError) in try pendingNow(for: destination, limit: limit) }
    }

    /// ``pending(for:limit:)``, read on the journal's read queue while the caller is suspended.
    public func pending(for destination: String, limit: Int) async throws(JournalError) -> PendingRecords {
        try await journal.readQueue.awaiting { () throws(JournalError) in try self.pendingNow(for: destination, limit: limit) }
    }

    /// What is held is read first, then the journal: a record a commit stores meanwhile is then
    /// found in both, and counts once, as stored; one held before the read is never in neither.
    /// The regions the held records start from are read in the journal's same snapshot: read
    /// later, they could hold an event a commit stored meanwhile, and its held record would go as
    /// already inside the region it enters, with no transition (a region's entry was lost so,
    /// one wake in twelve, in scripts/sleep-vm's scenario 5).
    ///
    /// The records held and already sent count for the regions of those after them: read apart,
    /// an entry sent in one batch, its commit not yet done, was missing from the next batch's
    /// regions (OwnTracksTransitionTests under ThreadSanitizer beside a busy loop).
    private func pendingNow(for destination: String, limit: Int) throws(JournalError) -> PendingRecords {
        let (position, held, sentHeld, sentRegionEvents, failing) = state.read { state in
            let position = state.delivered[destination]
            let held = state.held
            let start = position?.heldThrough.flatMap { id in held.firstIndex { $0.id == id }.map { $0 + 1 } } ?? held.startIndex
            let sent = held[..<start]
            return (
                position, Array(held[start...]), Set(sent.map(\.id)), sent.filter { $0.event?.condition?.isRegion == true },
                state.failure != nil
            )
        }
        var pending = try journal.pending(for: destination, limit: limit + sentHeld.count, after: position?.through, regionsAtEnd: !held.isEmpty)
        let inSnapshot = Set(pending.records.map(\.id))  // stored by a commit that ended before the read, if any
        if !sentHeld.isEmpty {  // stored meanwhile, and sent while held: not again
            let next = pending.records.dropFirst(pending.retried).filter { !sentHeld.contains($0.id) }
            pending.records = Array(pending.records.prefix(pending.retried)) + next
        }
        pending.records = Array(pending.records.prefix(limit))
        pending.retried = min(pending.retried, limit)
        guard pending.records.count == pending.retried, pending.records.count < limit else { return pending }
        // In full a record goes once stored, unless the journal cannot be written, when what is
        // held goes as it is.
        guard durability != .full || failing else { return pending }
        // Not at the journal's end: the page was full, and nothing held goes yet.
        guard var inside = pending.regionsAtEnd else { return pending }
        for entry in sentRegionEvents where !inSnapshot.contains(entry.id) { FixJournal.apply(entry, to: &inside) }
        let unstored = held.lazy.filter { !inSnapshot.contains($0.id) }.prefix(limit - pending.records.count)
        pending.records += journal.unstoredRecords(Array(unstored), after: inside, battery: nil)
        return pending
    }

    /// `destination`'s server acknowledged `records`, the next in order of
    /// `pending(for:limit:)` (retried dead letters left out): stored with the next commit,
    /// which comes within the commit interval even when no fix comes.
    public func acknowledge(_ records: some BidirectionalCollection<JournalRecord>, by destination: String) {
        guard let last = records.last else { return }
        state.withLock { state in
            var position = state.delivered[destination] ?? DeliveredPosition()
            if last.sequence > 0 {
                position.through = max(position.through ?? 0, last.sequence)
            } else if state.held.contains(where: { $0.id == last.id }) {
                position.heldThrough = last.id
                // Those before it that a commit stored after they were read went too: not again
                // from the journal (a commit's worth went twice so, OwnTracksTransitionTests
                // under ThreadSanitizer beside a busy loop).
                let committed = state.committed
                if let sequence = records.reversed().lazy.compactMap({ committed[$0.id] }).first {
                    position.through = max(position.through ?? 0, sequence)
                }
            } else if let sequence = state.committed[last.id] {
                position.through = max(position.through ?? 0, sequence)
            }  // else stored long ago and forgotten here: sent again after a restart, with its id
            state.delivered[destination] = position
            if state.held.isEmpty { wake.yield() }
        }
    }

    /// How many records `destination` has still to send: its queue in the journal
    /// (``DestinationStatus/depth``) less what was delivered since the last commit, and the
    /// records held here it has not sent. Counted on the journal's read queue, like
    /// `pending(for:limit:)`.
    public func waiting(for destination: String) throws(JournalError) -> Int {
        try journal.onReadQueue { () throws(JournalError) in try waitingNow(for: destination) }
    }

    /// ``waiting(for:)``, counted on the journal's read queue while the caller is suspended.
    public func waiting(for destination: String) async throws(JournalError) -> Int {
        try await journal.readQueue.awaiting { () throws(JournalError) in try self.waitingNow(for: destination) }
    }

    private func waitingNow(for destination: String) throws(JournalError) -> Int {
        if state.read({ $0.lastStored }) == nil {
            let last = try journal.lastSequence()  // before what is held is read: below all of it
            state.withLock { $0.lastStored = max($0.lastStored ?? 0, last) }
        }
        let (position, held, heldSent, lastStored) = state.read { state in
            let position = state.delivered[destination]
            let held = state.held
            let heldSent = position?.heldThrough.flatMap { id in held.firstIndex { $0.id == id }.map { $0 + 1 - held.startIndex } } ?? 0
            return (position, Array(held), heldSent, state.lastStored ?? 0)
        }
        let stored = try journal.status(of: destination)
        var sent = 0
        if let through = position?.through, through > stored.deliveredThrough {
            sent = try journal.recordCount(after: stored.deliveredThrough, through: through)
        }
        // Held when counted, stored by a commit that ended since: counted once, as stored (and
        // as sent, if it was sent while held).
        var storedMeanwhile = 0, sentAndStored = 0
        if !held.isEmpty {
            let ids = try journal.storedIDs(after: max(lastStored, stored.deliveredThrough))
            for (index, entry) in held.enumerated() where ids.contains(entry.id) {
                storedMeanwhile += 1
                if index < heldSent { sentAndStored += 1 }
            }
        }
        return max(0, stored.depth - sent - sentAndStored) + (held.count - storedMeanwhile) - (heldSent - sentAndStored)
    }

    /// Each commit renews the delivery leases `owner` holds, until `ttl` from then: a deliverer
    /// of this process then renews its lease with no commit of its own while fixes come.
    public func renewLeases(of owner: String, for ttl: Duration) {
        lease.withLock { $0 = (owner, ttl) }
    }

    /// Calls `body` after each fix or event is taken (a deliverer's cue to read
    /// `pending(for:limit:)`), on the thread that recorded it.
    public func onHold(_ body: @escaping @Sendable () -> Void) {
        holdObservers.withLock { $0.append(body) }
    }

    /// Commits what is held now (a remote command's answer, a stop), and what was delivered,
    /// waiting on the calling thread. Returns whether the commit succeeded (fixes recorded
    /// meanwhile wait for the next); `false` loses nothing: what is held stays held, as
    /// ``Report/holding(held:error:)`` says.
    @discardableResult
    public func commit() -> Bool {
        journal.onQueue { commitHeld() }
    }

    /// ``commit()``, on the journal's queue while the caller is suspended.
    @discardableResult
    public func commit() async -> Bool {
        await journal.queue.awaiting { self.commitHeld() }
    }

    /// Commits each group when its interval is up, and tries a failed commit again every
    /// ``retryInterval``, until the task is cancelled; then commits what is held (or, when the
    /// journal still cannot be written, reports it ``Report/notStoredAtStop(held:error:)``).
    public func run() async {
        for await _ in wakes {
            let wait = state.read { $0.failure == nil } ? commitInterval : retryInterval
            do { try await clock.sleep(for: wait) } catch { break }
            await commit()  // a failed commit wakes this loop again itself
        }
        if await !commit() {
            let (count, failure) = state.read { ($0.held.count, $0.failure) }
            if let failure, count > 0 { report(.notStoredAtStop(held: count, error: failure)) }
        }
    }

    /// Commits what is held now (before the device sleeps), or throws why it could not.
    public func commitNow() throws {
        guard commit() else {
            throw JournalError.database(path: journal.file.path, detail: "fixes held in memory could not be committed before the sleep")
        }
    }

    /// Commits what is held, then marks the gap after it: the gap follows every fix taken before it.
    public func recordGap(from start: Date, to end: Date, reason: String) throws {
        try journal.onQueue { () throws(JournalError) in
            commitHeld()
            try journal.markGap(from: start, to: end, reason: reason)
        }
    }

    /// Commits what is held: nothing waits in memory while the app is suspended.
    public func pause() async { await commit() }

    /// Nothing to do: ``run()`` goes on as fixes come.
    public func resume() {}

    private func hold(_ location: Location, _ event: MonitorEvent?, then tell: (@Sendable () -> Void)? = nil) {
        let arrived = journal.now()
        let offset = journal.comparesClocks ? SystemClockOffset(fixTime: location.timestamp, systemTime: arrived) : nil
        let (isDue, tellNow) = state.withLock { state in
            if let offset, offset.isBeyondTolerance != state.clockWasWrong {
                state.clockWasWrong = offset.isBeyondTolerance
                report(.systemClock(offset))
            }
            var entry = FixJournal.Entry(location: location, event: event, arrived: arrived, battery: journal.battery())
            // While the journal cannot be written, a fix is told as it is held (as it is said).
            let tellNow = state.failure != nil
            if !tellNow { entry.tell = tell }
            state.entries.append(entry)
            if state.held.count > capacity, let failure = state.failure {
                let excess = state.held.count - capacity
                state.dropOldest(excess)
                state.droppedCount += excess
                report(.dropped(count: excess, error: failure))
            }
            let isDue = durability == .full || event != nil || state.held.count >= maximumGroup
            if state.failure == nil, isDue { return (true, tellNow) }
            if state.held.count == 1 || state.failure != nil { wake.yield() }
            return (false, tellNow)
        }
        if tellNow { tell?() }
        if isDue {
            // Full, recorded without a `tell`: on the disk before the next fix is taken, so the
            // caller waits. Otherwise the commit goes on while the fix path does.
            if durability == .full, tell == nil {
                _ = journal.onQueue { commitHeld() }
            } else {
                journal.queue.async { self.commitHeld() }
            }
        }
        for observer in holdObservers.read({ $0 }) { observer() }
    }

    /// On the journal's queue, one commit at a time, so commits keep the order fixes came in.
    /// What is held is stored outside the lock (the fix path goes on recording meanwhile) and
    /// stays held until the commit returns: a pending read, on the same queue, finds each record
    /// either stored or held, never both or neither.
    @discardableResult
    private func commitHeld() -> Bool {
        let (entries, delivered) = state.read { (Array($0.held), $0.delivered) }
        guard !entries.isEmpty || !delivered.isEmpty else { return true }
        let started = ContinuousClock.now
        let records: [JournalRecord]
        do {
            records = try journal.append(entries: entries, delivered: delivered, renewing: lease.read { $0 })
        } catch {
            let (held, tells) = state.withLock { state in
                state.failure = error
                return (state.held.count, state.takeTells())
            }
            if held > 0 { report(.holding(held: held, error: error)) }
            for tell in tells { tell() }
            wake.yield()
            return false
        }
        let stored = Dictionary(records.map { ($0.id, $0.sequence) }, uniquingKeysWith: { $1 })
        let leftOver = state.withLock { state in
            // The committed entries lead what is held, less any the capacity dropped meanwhile.
            state.dropOldest(state.held.prefix { stored[$0.id] != nil }.count)
            for (destination, position) in state.delivered {
                if delivered[destination] == position {
                    state.delivered[destination] = nil
                } else if let id = position.heldThrough, let last = records.last?.sequence {
                    // Acknowledged during the commit, its record still held or stored by it: what
                    // the commit stored led it, so it went too. Kept for the next commit, numbered
                    // as far as this one stored (forgotten, a whole commit's worth went again from
                    // the journal: OwnTracksTransitionTests under ThreadSanitizer).
                    let sequence = stored[id]
                    state.delivered[destination] = DeliveredPosition(
                        through: max(position.through ?? 0, sequence ?? last), heldThrough: sequence == nil ? id : nil
                    )
                }
            }
            state.failure = nil
            state.storedCount += records.count
            if state.committed.count > 4 * maximumGroup { state.committed = [:] }
            state.committed.merge(stored) { $1 }
            state.lastStored = max(state.lastStored ?? 0, records.last?.sequence ?? 0)
            return !state.held.isEmpty || !state.delivered.isEmpty
        }
        // What came during the commit has had no cue of its own (its first fix found the
        // committed ones still held): its interval starts now.
        if leftOver { wake.yield() }
        guard !records.isEmpty else { return true }  // only where the destinations stand
        var commit = JournalCommit(records)
        commit.duration = started.duration(to: .now)
        report(.stored(commit))
        for entry in entries { entry.tell?() }
        return true
    }
}

/// The records of one commit: the first and last sequence numbers, and the fix times they span.
public struct JournalCommit: Sendable, Hashable {
    /// The first record's sequence number.
    public var first: Int64
    /// The last record's sequence number.
    public var last: Int64
    /// How many records (fixes and events).
    public var count: Int
    /// The first record's fix time, if it has one.
    public var firstFixTime: Double?
    /// The last record's fix time, if it has one.
    public var lastFixTime: Double?
    /// How far the system clock was from the receiver's at the last record compared.
    public var systemClockOffset: SystemClockOffset?
    /// How long the commit took, fsync and any retention it ran included.
    public var duration: Duration = .zero

    init(_ records: [JournalRecord]) {
        first = records.first?.sequence ?? 0
        last = records.last?.sequence ?? 0
        count = records.count
        firstFixTime = records.first?.location.timestamp?.timeIntervalSince1970
        lastFixTime = records.last?.location.timestamp?.timeIntervalSince1970
        systemClockOffset = records.last { $0.systemClockOffset != nil }?.systemClockOffset
    }
}
