public import KeepAliveJournal

/// Sends journal records to one server, in order, and says which the server acknowledged.
public protocol DeliveryTransport: Sendable {
    /// Sends `records` in order. The result's `acknowledged` counts the records, from the
    /// first, that the server acknowledged (HTTP 2xx, MQTT PUBACK); `failure` says why the
    /// next one was not.
    func send(_ records: [JournalRecord]) async -> DeliveryResult

    /// Waits until `send` can go at once (a broker connection), at most the transport's own
    /// timeout: `nil` when ready, or why not. The deliverer checks its lease after this wait,
    /// which a frozen process may spend frozen, and only then sends.
    func waitUntilReady() async -> DeliveryFailure?

    /// Called with a handler to run when the transport sees the server reachable again
    /// (a reconnection), so waiting retries can go at once.
    func onReachable(_ handler: @escaping @Sendable () -> Void)

    /// Closes connections; `send` may open them again.
    func close() async
}

extension DeliveryTransport {
    /// By default a transport is always ready (an HTTP request connects as it goes).
    public func waitUntilReady() async -> DeliveryFailure? { nil }
    /// By default a transport never says the server is reachable again (retries wait their backoff).
    public func onReachable(_ handler: @escaping @Sendable () -> Void) {}
    /// By default there is nothing to close.
    public func close() async {}
}

/// What came of sending a batch.
public struct DeliveryResult: Sendable, Hashable {
    /// How many records of the batch, from its start, the server acknowledged.
    public var acknowledged: Int
    /// Why the rest was not, if it was not.
    public var failure: DeliveryFailure?

    /// A result: `acknowledged` records in order, then `failure` if any.
    public init(acknowledged: Int, failure: DeliveryFailure? = nil) {
        self.acknowledged = acknowledged
        self.failure = failure
    }
}

/// Why a record was not acknowledged.
public enum DeliveryFailure: Sendable, Hashable, CustomStringConvertible {
    /// Try again later: no connection, a timeout, HTTP 408, 429 or 5xx.
    case unavailable(String)
    /// The server refused this record for good (HTTP 4xx other than 408 and 429).
    case refused(String)

    /// The outcome in words.
    public var description: String {
        switch self {
        case .unavailable(let reason): reason
        case .refused(let reason): "refused: \(reason)"
        }
    }
}
