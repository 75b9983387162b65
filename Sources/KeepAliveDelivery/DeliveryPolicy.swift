/// How a destination is fed from the journal: batching, retries and dead letters.
public struct DeliveryPolicy: Sendable, Hashable {
    /// With a ``maximumLatency``, send as soon as this many fixes wait...
    public var batchThreshold = 10
    /// ...or as soon as the oldest waiting fix has waited this long. Zero (the default): at
    /// once; what comes while a batch is in flight goes in the next.
    public var maximumLatency: Duration = .zero
    /// At most this many fixes in one batch (one batch in flight at a time).
    public var maximumBatch = 100
    /// Retries wait from `minimumBackoff`, doubling with jitter, up to `maximumBackoff`.
    public var minimumBackoff: Duration = .seconds(1)
    /// The longest wait between retries.
    public var maximumBackoff: Duration = .seconds(120)
    /// A fix the server refuses this many times goes to the dead letters.
    public var maximumRefusals = 3
    /// How often the journal is read for fixes other processes appended.
    public var pollInterval: Duration = .seconds(1)
    /// How long a delivering process's claim on a destination lasts unless renewed: a process
    /// frozen without notice is taken over after this (one the host freezes, or that stops,
    /// gives its lease up first, and a killed one's is taken at once). Renewed every third of it,
    /// by the service's journal commits while fixes come: a write of its own only when they do not.
    public var leaseDuration: Duration = .seconds(300)
    /// How long a batch may wait for its acknowledgements.
    public var acknowledgementTimeout: Duration = .seconds(15)

    /// The defaults: each fix sent at once, batches of up to 100 when they came while one was in
    /// flight; retries from 1 s to 2 min; dead letters after 3 refusals.
    public init() {}
}
