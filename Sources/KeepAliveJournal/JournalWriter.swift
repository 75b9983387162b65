public import FoundationEssentials
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
/// Nothing is dropped silently: past ``capacity`` fixes held, the oldest go, and
/// ``Report/dropped(count:error:)`` says how many.
///
/// Delivery need not wait for a commit: a deliverer reads ``pending(for:limit:)``, which goes on
/// from the stored records to those held here, and tells ``acknowledge(_:by:)`` what its server
/// took. What was delivered is stored with the next commit, in the same transaction as the
/// records, so a destination's cursor costs no write of its own (the journaling article says what
/// this promises, and what a power cut can do).
public final class JournalWriter: FixRecorder, MonitorEventRecorder, PausableWork, Sendable {
    /// What the writer did, for the service's output.
    public enum Report: Sendable, Equatable {
        /// A commit returned: these records are on the disk.
        case stored(JournalCommit)
        /// The journal could not be written: `held` fixes wait in memory and are committed when
        /// it can be written again (tried every ``JournalWriter/retryInterval``).
        case holding(held: Int, error: JournalError)
        /// The oldest held fixes went, unjournaled, to keep at most ``JournalWriter/capacity``.
        case dropped(count: Int, error: JournalError)
        /// The system clock went beyond ``SystemClockOffset/tolerance`` of the receiver's time
        /// (the fixes from now on are marked), or came back within it: said once each way.
        case systemClock(SystemClockOffset)
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
        /// Whether the last fix compared found the system clock wrong.
        var clockWasWrong = false
        /// What each destination's server acknowledged since the last commit.
        var delivered: [String: DeliveredPosition] = [:]
        /// The sequence numbers the last commits gave, by record id: an acknowledgement of a
        /// record sent while held, which came after its commit, finds its number here.
        var committed: [String: Int64] = [:]

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

    /// Takes `fix`: stored at once in ``JournalDurability/full``, with its group in
    /// ``JournalDurability/grouped``. Never throws: a journal that cannot be written is reported,
    /// and the fix held until it can.
    public func record(_ fix: Location) {
        hold(fix, nil)
    }

    /// Takes `event` and commits it at once, after the fixes held before it.
    public func record(_ event: MonitorEvent) {
        hold(event.location, event)
    }

    /// What `destination` sends next, at most `limit`: the journal's
    /// ``FixJournal/pending(for:limit:)`` after what was delivered since the last commit, and
    /// once those are all sent, the records held here, not yet stored (each with sequence number
    /// 0 and the id it will be stored with).
    public func pending(for destination: String, limit: Int) throws(JournalError) -> PendingRecords {
        try state.withLock { state throws(JournalError) in
            let position = state.delivered[destination]
            var pending = try journal.pending(for: destination, limit: limit, after: position?.through)
            guard pending.records.count == pending.retried, pending.records.count < limit else { return pending }
            let held = state.held
            let start = position?.heldThrough.flatMap { id in held.firstIndex { $0.id == id }.map { $0 + 1 } } ?? held.startIndex
            pending.records += try journal.unstoredRecords(held[start...].prefix(limit - pending.records.count), battery: nil)
            return pending
        }
    }

    /// `destination`'s server acknowledged `records`, the next in order of
    /// ``pending(for:limit:)`` (retried dead letters left out): stored with the next commit,
    /// which comes within the commit interval even when no fix comes.
    public func acknowledge(_ records: some BidirectionalCollection<JournalRecord>, by destination: String) {
        guard let last = records.last else { return }
        state.withLock { state in
            var position = state.delivered[destination] ?? DeliveredPosition()
            if last.sequence > 0 {
                position.through = max(position.through ?? 0, last.sequence)
            } else if state.held.contains(where: { $0.id == last.id }) {
                position.heldThrough = last.id
            } else if let sequence = state.committed[last.id] {
                position.through = max(position.through ?? 0, sequence)
            }  // else stored long ago and forgotten here: sent again after a restart, with its id
            state.delivered[destination] = position
            if state.held.isEmpty { wake.yield() }
        }
    }

    /// How many records `destination` has still to send: its queue in the journal
    /// (``DestinationStatus/depth``) less what was delivered since the last commit, and the
    /// records held here it has not sent.
    public func waiting(for destination: String) throws(JournalError) -> Int {
        try state.withLock { state throws(JournalError) in
            let stored = try journal.status(of: destination)
            let position = state.delivered[destination]
            var sent = 0
            if let through = position?.through, through > stored.deliveredThrough {
                sent = try journal.recordCount(after: stored.deliveredThrough, through: through)
            }
            let held = state.held
            let heldSent = position?.heldThrough.flatMap { id in held.firstIndex { $0.id == id }.map { $0 + 1 - held.startIndex } } ?? 0
            return max(0, stored.depth - sent) + held.count - heldSent
        }
    }

    /// Each commit renews the delivery leases `owner` holds, until `ttl` from then: a deliverer
    /// of this process then renews its lease with no commit of its own while fixes come.
    public func renewLeases(of owner: String, for ttl: Duration) {
        lease.withLock { $0 = (owner, ttl) }
    }

    /// Calls `body` after each fix or event is taken (a deliverer's cue to read
    /// ``pending(for:limit:)``), on the thread that recorded it.
    public func onHold(_ body: @escaping @Sendable () -> Void) {
        holdObservers.withLock { $0.append(body) }
    }

    /// Commits what is held now (a remote command's answer, a stop), and what was delivered.
    /// Returns whether nothing is left held.
    @discardableResult
    public func commit() -> Bool {
        state.withLock { state in commitHeld(&state) }
    }

    /// Commits each group when its interval is up, and tries a failed commit again every
    /// ``retryInterval``, until the task is cancelled; then commits what is held (or, when the
    /// journal still cannot be written, reports it ``Report/dropped(count:error:)``).
    public func run() async {
        for await _ in wakes {
            let wait = state.read { $0.failure == nil } ? commitInterval : retryInterval
            do { try await clock.sleep(for: wait) } catch { break }
            commit()  // a failed commit wakes this loop again itself
        }
        if !commit() {
            let (count, failure) = state.read { ($0.held.count, $0.failure) }
            if let failure { report(.dropped(count: count, error: failure)) }
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
        commit()
        try journal.markGap(from: start, to: end, reason: reason)
    }

    /// Commits what is held: nothing waits in memory while the app is suspended.
    public func pause() async { commit() }

    /// Nothing to do: ``run()`` goes on as fixes come.
    public func resume() {}

    private func hold(_ location: Location, _ event: MonitorEvent?) {
        let arrived = journal.now()
        let offset = journal.comparesClocks ? SystemClockOffset(fixTime: location.timestamp, systemTime: arrived) : nil
        state.withLock { state in
            if let offset, offset.isBeyondTolerance != state.clockWasWrong {
                state.clockWasWrong = offset.isBeyondTolerance
                report(.systemClock(offset))
            }
            state.entries.append(FixJournal.Entry(location: location, event: event, arrived: arrived, battery: journal.battery()))
            if state.held.count > capacity, let failure = state.failure {
                let excess = state.held.count - capacity
                state.dropOldest(excess)
                report(.dropped(count: excess, error: failure))
            }
            let isDue = durability == .full || event != nil || state.held.count >= maximumGroup
            if state.failure == nil, isDue {
                commitHeld(&state)
            } else if state.held.count == 1 || state.failure != nil {
                wake.yield()
            }
        }
        for observer in holdObservers.read({ $0 }) { observer() }
    }

    /// Under the lock, so commits keep the order fixes came in.
    @discardableResult
    private func commitHeld(_ state: inout State) -> Bool {
        guard !state.held.isEmpty || !state.delivered.isEmpty else { return true }
        do {
            let started = ContinuousClock.now
            let records = try journal.append(entries: Array(state.held), delivered: state.delivered, renewing: lease.read { $0 })
            state.removeAll()
            state.delivered = [:]
            state.failure = nil
            if state.committed.count > 4 * maximumGroup { state.committed = [:] }
            for record in records { state.committed[record.id] = record.sequence }
            guard !records.isEmpty else { return true }  // only where the destinations stand
            var commit = JournalCommit(records)
            commit.duration = started.duration(to: .now)
            report(.stored(commit))
            return true
        } catch {
            state.failure = error
            if !state.held.isEmpty { report(.holding(held: state.held.count, error: error)) }
            wake.yield()
            return false
        }
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
