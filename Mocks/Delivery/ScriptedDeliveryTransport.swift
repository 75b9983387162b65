import KeepAliveCore
public import KeepAliveDelivery
public import KeepAliveJournal

/// A delivery transport a test scripts record by record: acknowledge, fail for now, or refuse
/// for good. Keeps every batch it was given, and what it acknowledged, in order.
///
/// ```swift
/// let transport = ScriptedDeliveryTransport { record, attempt in
///     record.sequence == 5 ? .refuse("HTTP 400") : .acknowledge
/// }
/// let deliverer = Deliverer(destination: "server", journal: journal, transport: transport, clock: clock)
/// ```
public final class ScriptedDeliveryTransport: DeliveryTransport {
    /// What the scripted server does with one record.
    public enum Answer: Sendable, Hashable {
        /// Delivered.
        case acknowledge
        /// Not reachable, with the reason: the batch is retried.
        case unavailable(String)
        /// Refused for good, with the reason: after enough tries, a dead letter.
        case refuse(String)
    }

    /// What was sent and answered so far.
    public struct Log: Sendable {
        /// Each batch's sequence numbers, as sent.
        public var batches: [[Int64]] = []
        /// Every acknowledged record, in order (a record sent twice appears twice).
        public var acknowledged: [JournalRecord] = []
        /// How many times each record was offered.
        public var attempts: [Int64: Int] = [:]
        /// How many times the transport was closed.
        public var closed = 0
    }

    private let answer: @Sendable (JournalRecord, _ attempt: Int) -> Answer
    private let readiness: @Sendable () async -> DeliveryFailure?
    private let log = ObservedState(Log())
    private let reachable = Locked<(@Sendable () -> Void)?>(nil)

    /// - Parameters:
    ///   - answer: the answer for a record on its n-th attempt (from 1).
    ///   - readiness: what waiting for a connection does before each send (by default, ready
    ///     at once); a test can make time pass in it, as a process frozen while it waits.
    public init(
        answer: @escaping @Sendable (JournalRecord, _ attempt: Int) -> Answer = { _, _ in .acknowledge },
        readiness: @escaping @Sendable () async -> DeliveryFailure? = { nil }
    ) {
        self.answer = answer
        self.readiness = readiness
    }

    /// Runs the scripted readiness.
    public func waitUntilReady() async -> DeliveryFailure? { await readiness() }

    /// The log now.
    public var current: Log { log.value }

    /// Answers each record as the script says, in order, stopping at the first not acknowledged.
    public func send(_ records: [JournalRecord]) async -> DeliveryResult {
        log.update { log -> DeliveryResult in
            log.batches.append(records.map(\.sequence))
            for (index, record) in records.enumerated() {
                log.attempts[record.sequence, default: 0] += 1
                switch answer(record, log.attempts[record.sequence]!) {
                case .acknowledge: log.acknowledged.append(record)
                case .unavailable(let reason): return DeliveryResult(acknowledged: index, failure: .unavailable(reason))
                case .refuse(let reason): return DeliveryResult(acknowledged: index, failure: .refused(reason))
                }
            }
            return DeliveryResult(acknowledged: records.count)
        }
    }

    /// Keeps `handler` for ``becomeReachable()``.
    public func onReachable(_ handler: @escaping @Sendable () -> Void) {
        reachable.withLock { $0 = handler }
    }

    /// Tells the deliverer the server is reachable again, as a reconnection would.
    public func becomeReachable() {
        reachable.read { $0 }?()
    }

    /// Counts the close.
    public func close() async {
        log.update { $0.closed += 1 }
    }

    /// Waits (real time, at most `timeout`) until the log satisfies `condition`: returns as soon
    /// as it does, so the default bound is a hang's (a loaded test process may take seconds).
    @discardableResult
    public func wait(
        timeout: Duration = .seconds(60),
        until condition: @escaping @Sendable (Log) -> Bool
    ) async -> Bool {
        await log.wait(until: condition, timeout: timeout)
    }
}
