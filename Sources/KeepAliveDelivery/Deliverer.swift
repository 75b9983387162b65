import FoundationEssentials
import Glibc
public import Logging
public import KeepAliveCore
public import KeepAliveJournal

/// Feeds one destination from the journal: strictly in order, at least once, one batch in
/// flight; a fix counts as delivered only once the server acknowledged it.
///
/// Given the service's ``JournalWriter``, it sends what the writer holds as soon as the stored
/// records are sent, before their commit, and the writer stores how far it got with its next
/// commit: live, with no write of its own. Batches go when `batchThreshold` fixes wait or the
/// oldest has waited `maximumLatency` (at once by default: what comes while a batch is in
/// flight goes in the next);
/// failures are retried with exponential backoff (at once when the server is reachable again);
/// a fix refused `maximumRefusals` times goes to the dead letters so the queue never blocks.
/// Only the process holding the destination's lease in the journal delivers it.
public final class Deliverer: Sendable {
    /// The destination's name: its queue in the journal.
    public let destination: String
    let journal: FixJournal
    /// The protocol's client it sends through.
    public let transport: any DeliveryTransport
    let policy: DeliveryPolicy
    let time: TimeSource
    let owner: String
    let logger: Logger
    let events: @Sendable (DeliveryEvent) -> Void
    /// The writer whose held records this deliverer sends before their commit, if any.
    let writer: JournalWriter?
    private let wake = WakeSignal()
    /// Drains asked for (``drain(within:)``), and the last one the loop answered by finding
    /// nothing left to send.
    private let drainsAsked = Locked(0)
    private let drainsAnswered = ObservedState(0)
    private let paused = Locked(false)
    /// Asked for by ``sendNow()``: the next batch goes without waiting to fill up.
    private let urgent = Locked(false)

    /// A deliverer for one destination of a journal.
    ///
    /// - Parameters:
    ///   - destination: the destination's name: its cursor and lease in the journal.
    ///   - journal: where the fixes are.
    ///   - transport: the protocol's client (MQTT, HTTP, or a test's).
    ///   - writer: the writer recording into `journal` in this process, whose held records are
    ///     sent before their commit (`nil`: only what is stored is sent, and each batch's
    ///     delivery written at once).
    ///   - policy: batching, backoff and refusals.
    ///   - owner: who delivers, as the lease records it (default: this process).
    ///   - clock: waits between batches and retries (a test clock replays hours at once).
    ///   - logger: where failures and take-overs are logged.
    ///   - events: what delivery did, as it happens.
    public init<C: Clock>(
        destination: String,
        journal: FixJournal,
        transport: any DeliveryTransport,
        writer: JournalWriter? = nil,
        policy: DeliveryPolicy = DeliveryPolicy(),
        owner: String = Deliverer.processOwner(role: "service"),
        clock: C = DispatchClock(),
        logger: Logger = Logger(label: "LocationKeepAlive.delivery"),
        events: @escaping @Sendable (DeliveryEvent) -> Void = { _ in }
    ) where C.Duration == Duration {
        self.destination = destination
        self.journal = journal
        self.transport = transport
        self.policy = policy
        self.owner = owner
        self.time = TimeSource(clock)
        self.logger = logger
        self.events = events
        self.writer = writer
        transport.onReachable { [wake] in wake.raise(.reachable) }
        writer?.onHold { [wake] in wake.raise(.appended) }
    }

    /// `pid@host/boot role`: the lease owner for this process (`boot`, the first 8 characters of
    /// the kernel's boot id, tells a lease taken before a reboot, whose process is gone).
    public static func processOwner(role: String) -> String {
        let host = (try? String(contentsOfFile: "/proc/sys/kernel/hostname", encoding: .utf8))?.trimmed ?? "localhost"
        let boot = (try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8))?.trimmed.prefix(8) ?? ""
        return "\(getpid())@\(host)\(boot.isEmpty ? "" : "/\(boot)") \(role)"
    }

    /// New fixes are in the journal: a waiting batch may be due.
    public func recordsAppended() { wake.raise(.appended) }

    /// What is waiting goes at once, without waiting for the batch to fill up (a fix a server
    /// asked for). A retry still waits its backoff.
    public func sendNow() {
        urgent.withLock { $0 = true }
        wake.raise(.appended)
    }

    /// The network is back: a waiting retry goes at once.
    public func networkCameBack() { wake.raise(.reachable) }

    /// Stops delivering and gives the lease up (before the process is frozen), until `resume()`.
    public func pause() async {
        paused.withLock { $0 = true }
        _ = try? await onJournal { [destination, owner] journal throws(JournalError) in try journal.releaseLease(for: destination, owner: owner) }
        await transport.close()
    }

    /// Sends what waits at once and returns once nothing is left to send (`true`), or after
    /// `bound` (`false`: the server unreachable or slow, another process holding the lease).
    public func drain(within bound: Duration) async -> Bool {
        let asked = drainsAsked.withLock { count in
            count += 1
            return count
        }
        sendNow()
        return await drainsAnswered.wait(until: { $0 >= asked }, timeout: bound, time: time)
    }

    /// Starts delivering again after ``pause()``.
    public func resume() {
        paused.withLock { $0 = false }
        wake.raise(.reachable)
    }

    /// What the delivery loop carries from one turn to the next.
    struct Loop {
        /// Failures in a row: the backoff's attempt.
        var failures = 0
        /// Acknowledged but not yet recorded (the journal's disk full): kept in memory, skipped
        /// when reading the queue, recorded as soon as the journal takes writes again.
        var unsaved: [JournalRecord] = []
        var holdsLease = false
        /// Whether the wait for another process's lease was said (``DeliveryEvent/waitingForLease(destination:holder:)``).
        var toldWaiting = false
        /// When the lease was last renewed, on this deliverer's clock.
        var renewed = Duration.zero
        /// Since when the oldest record waiting has waited, on this deliverer's monotonic clock:
        /// from when it was first seen, less the wait the wall clock gives it then (at most the
        /// bound). A wall clock set back gives no wait (the bound is then counted from here),
        /// one set forward the whole bound (sent at once: early, never late).
        var oldestWaiting: (id: String, since: Duration)?
    }

    /// Delivers until the task is cancelled; then gives the lease up and closes the transport.
    public func run() async {
        let appends = Task { [journal, wake] in
            for await _ in journal.appends() { wake.raise(.appended) }
        }
        var loop = Loop()
        while !Task.isCancelled {
            let drainAsked = drainsAsked.withLock { $0 }
            if paused.withLock({ $0 }) {
                loop.holdsLease = false
                _ = await wake.wait(for: [.reachable], timeout: policy.pollInterval, time: time)
                continue
            }
            do throws(JournalError) {
                guard try await keepLease(&loop) else {
                    _ = await wake.wait(for: [], timeout: policy.pollInterval, time: time)
                    continue
                }
                if !loop.unsaved.isEmpty {
                    let (unsaved, destination) = (loop.unsaved, destination)
                    if (try? await onJournal { journal throws(JournalError) in try journal.markDelivered(unsaved, to: destination) }) != nil { loop.unsaved = [] }
                }
                let (batch, retried) = try await nextBatch(&loop, drainAsked: drainAsked)
                if let wait = waitBeforeSending(batch, waited: loop.oldestWaiting.map { time.now() - $0.since } ?? .zero) {
                    _ = await wake.wait(for: [.appended], timeout: wait, time: time)
                    continue
                }
                try await send(batch, retried: retried, &loop)
            } catch {
                events(.journalError(destination: destination, error))
                logger.error("journal error while delivering", metadata: ["destination": "\(destination)", "error": "\(error)"])
                _ = await wake.wait(for: [], timeout: policy.maximumBackoff / 4, time: time)
            }
        }
        appends.cancel()
        if loop.holdsLease { _ = try? await onJournal { [destination, owner] journal throws(JournalError) in try journal.releaseLease(for: destination, owner: owner) } }
        await transport.close()
    }

    /// `body` with the journal, on the journal's own queue while this task waits suspended: a
    /// read may wait for a commit, and a write for the disk, neither on the concurrency pool.
    private func onJournal<Value: Sendable>(
        _ body: @escaping @Sendable (FixJournal) throws(JournalError) -> Value
    ) async throws(JournalError) -> Value {
        try await journal.perform(body)
    }

    /// Says, at once, who holds the lease this deliverer waits for, and since when.
    private func sayWaiting() async {
        let holder = try? await journal.performReading { [destination] journal throws(JournalError) in try journal.leaseHolder(of: destination) }
        events(.waitingForLease(destination: destination, holder: holder))
        logger.notice(
            "another process delivers \(destination)\(holder.map { ": \($0)" } ?? ""); this one waits until it gives the lease up or it runs out"
        )
    }

    /// Holds the destination's lease: renewed by the writer's commits when it can be, taken (or
    /// renewed) in the journal a third of its time after the last renewal. Returns whether it holds it.
    private func keepLease(_ loop: inout Loop) async throws(JournalError) -> Bool {
        if loop.holdsLease, time.now() - loop.renewed > policy.leaseDuration / 3,
            let left = try await journal.performReading({ [destination, owner] journal throws(JournalError) in
                try journal.leaseRemaining(for: destination, owner: owner)
            }),
            left > policy.leaseDuration * 2 / 3,
            left <= policy.leaseDuration
        {
            loop.renewed = time.now() - (policy.leaseDuration - left)  // renewed by the writer's commits: no write here
        }
        if !loop.holdsLease || time.now() - loop.renewed > policy.leaseDuration / 3 {
            let ttl = policy.leaseDuration
            let acquired = try await onJournal { [destination, owner] journal throws(JournalError) in try journal.acquireLease(for: destination, owner: owner, ttl: ttl) }
            if acquired, !loop.holdsLease {
                events(.tookOver(destination: destination))
            } else if !acquired, loop.holdsLease || !loop.toldWaiting {
                await sayWaiting()
            }
            loop.toldWaiting = !acquired
            if !acquired, loop.holdsLease { await transport.close() }
            loop.holdsLease = acquired
            loop.renewed = time.now()
        }
        return loop.holdsLease
    }

    /// The next batch, in order: what the writer holds after what is stored (or what is stored),
    /// less what was acknowledged and not recorded yet; `retried` of its first are dead letters
    /// sent again. An empty queue answers the drains asked so far.
    private func nextBatch(_ loop: inout Loop, drainAsked: Int) async throws(JournalError) -> (batch: [JournalRecord], retried: Int) {
        let skipped = Set(loop.unsaved.map(\.sequence))
        let limit = policy.maximumBatch + skipped.count
        let pending: PendingRecords
        if let writer {
            pending = try await writer.pending(for: destination, limit: limit)
        } else {
            pending = try await journal.performReading { [destination] journal throws(JournalError) in
                try journal.pendingRecords(for: destination, limit: limit)
            }
        }
        let batch = pending.records.filter { !$0.isStored || !skipped.contains($0.sequence) }.prefix(policy.maximumBatch).map { $0 }
        let retries = Set(pending.records.prefix(pending.retried).map(\.sequence))
        let retried = batch.prefix { $0.isStored && retries.contains($0.sequence) }.count
        if batch.isEmpty { drainsAnswered.update { $0 = max($0, drainAsked) } }
        if let first = batch.first, loop.oldestWaiting?.id != first.id {
            let walled = min(max(0, journal.now().timeIntervalSince(first.recordedAt)), policy.maximumLatency.seconds)
            loop.oldestWaiting = (first.id, time.now() - .milliseconds(Int64(walled * 1000)))
        }
        return (batch, retried)
    }

    /// Sends `batch` and records what the server acknowledged; a failure is counted and waited out.
    private func send(_ batch: [JournalRecord], retried: Int, _ loop: inout Loop) async throws(JournalError) {
        let result: DeliveryResult
        if let failure = await transport.waitUntilReady() {
            result = DeliveryResult(acknowledged: 0, failure: failure)
        } else if time.now() - loop.renewed > policy.leaseDuration / 3 {
            return  // a long wait, perhaps frozen: the lease again before anything goes out
        } else {
            result = await transport.send(batch)
        }
        let delivered = batch.prefix(result.acknowledged)
        // With a writer, the records in order are stored with its next commit; retried
        // dead letters (and everything, without one) at once.
        let savedNow = writer == nil ? delivered : delivered.prefix(retried)
        writer?.acknowledge(delivered.dropFirst(retried), by: destination)
        // With a writer, usually nothing to write here: no turn on the journal's queue, where a
        // commit in flight would hold the next batch back.
        do {
            let (saved, destination) = (loop.unsaved + savedNow, destination)
            if !saved.isEmpty {
                try await onJournal { journal throws(JournalError) in try journal.markDelivered(saved, to: destination) }
            }
            loop.unsaved = []
        } catch {
            loop.unsaved += savedNow
            events(.journalError(destination: destination, error))
        }
        if let last = delivered.last {
            events(
                last.isStored
                    ? .delivered(destination: destination, count: delivered.count, through: last.sequence)
                    : .deliveredBeforeStored(destination: destination, count: delivered.count)
            )
        }
        guard let failure = result.failure else {
            loop.failures = 0
            return
        }
        try await failed(failure, sending: batch, acknowledged: result.acknowledged, &loop)
    }

    /// A refused stored fix counts toward the dead letters (and goes there after the most
    /// refusals); any other failure is recorded, and the next try waits its backoff (or until
    /// the server is reachable again).
    private func failed(
        _ failure: DeliveryFailure,
        sending batch: [JournalRecord],
        acknowledged: Int,
        _ loop: inout Loop
    ) async throws(JournalError) {
        if case .refused(let reason) = failure, acknowledged < batch.count, batch[acknowledged].isStored {
            let record = batch[acknowledged]
            let (destination, tries) = (destination, policy.maximumRefusals)
            let dead = try await onJournal { journal throws(JournalError) in try journal.recordRefusal(of: record, reason: reason, by: destination, maximumTries: tries) }
            if dead {
                logger.error(
                    "a fix went to the dead letters",
                    metadata: ["destination": "\(destination)", "sequence": "\(record.sequence)", "reason": "\(reason)"]
                )
                events(.deadLettered(destination: destination, sequence: record.sequence, reason: reason))
                loop.failures = 0
                return
            }
        } else if case .refused = failure, acknowledged < batch.count {
            await writer?.commit()  // a held record: its refusals are counted once it is stored, read again from the journal
        } else {
            let (description, destination) = (failure.description, destination)
            try await onJournal { journal throws(JournalError) in try journal.recordFailure(description, for: destination) }
        }
        loop.failures += 1
        let delay = Self.backoff(policy, attempt: loop.failures)
        events(.failed(destination: destination, reason: failure.description, retryIn: delay))
        logger.info("delivery failed", metadata: ["destination": "\(destination)", "reason": "\(failure)", "retry in": "\(delay)"])
        if await wake.wait(for: [.reachable], timeout: delay, time: time) == .reachable { loop.failures = 0 }
    }

    /// The wait before retry number `attempt`: `minimumBackoff * 2^(attempt-1)` times a jitter
    /// in 0.5...1, at least `minimumBackoff`, at most `maximumBackoff`.
    public static func backoff(_ policy: DeliveryPolicy, attempt: Int, jitter: Double = Double.random(in: 0.5...1)) -> Duration {
        Backoff(minimum: policy.minimumBackoff, maximum: policy.maximumBackoff).delay(forAttempt: attempt, jitter: jitter)
    }

    /// How long to wait before sending `batch` (`nil`: send now): empty, or fewer than the
    /// threshold and the oldest has `waited` less than the latency bound.
    private func waitBeforeSending(_ batch: [JournalRecord], waited: Duration) -> Duration? {
        guard !batch.isEmpty else { return policy.pollInterval }
        guard batch.count < policy.batchThreshold else { return nil }
        let isUrgent = urgent.withLock { flag in
            defer { flag = false }
            return flag
        }
        if isUrgent { return nil }
        let left = policy.maximumLatency - waited
        guard left > .zero else { return nil }
        return min(policy.pollInterval, left)
    }
}
