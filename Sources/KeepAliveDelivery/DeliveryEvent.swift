public import KeepAliveJournal

/// What a destination's delivery did, for logs and output.
public enum DeliveryEvent: Sendable {
    /// `count` fixes acknowledged, the newest in-order sequence now `through`.
    case delivered(destination: String, count: Int, through: Int64)
    /// `count` fixes acknowledged before their commit (sent from the ``JournalWriter``'s
    /// memory): the writer's next commit stores them and that they were delivered.
    case deliveredBeforeStored(destination: String, count: Int)
    /// A batch failed; the next try is in `retryIn` (sooner if the server is reachable again).
    case failed(destination: String, reason: String, retryIn: Duration)
    /// A fix refused `tries` times went to the dead letters.
    case deadLettered(destination: String, sequence: Int64, reason: String)
    /// Another process delivers this destination now (`holder`, since when: `nil` if it gave
    /// the lease up meanwhile); this one waits for its lease to be given up or to lapse. Said
    /// when the wait begins, the first time included.
    case waitingForLease(destination: String, holder: DeliveryLease?)
    /// This process delivers the destination from now on.
    case tookOver(destination: String)
    /// The journal could not be read or written.
    case journalError(destination: String, JournalError)
}
