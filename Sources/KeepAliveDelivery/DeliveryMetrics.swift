import CoreMetrics
import Dispatch
public import KeepAliveJournal

/// What delivery counts, through swift-metrics, beside a service's own metrics: fixes
/// delivered and failures by destination, and each destination's queue depth after a change.
public struct DeliveryMetrics: Sendable {
    private let journal: FixJournal
    private let writer: JournalWriter?

    /// Metrics of delivery from `journal` (whose queue depths the gauges read), and from what
    /// `writer` holds and has not committed.
    public init(journal: FixJournal, writer: JournalWriter? = nil) {
        self.journal = journal
        self.writer = writer
    }

    /// Counts what `event` says.
    public func record(_ event: DeliveryEvent) {
        let destination: String
        switch event {
        case .delivered(let name, let count, _), .deliveredBeforeStored(let name, let count):
            Counter(label: "keepalive_delivered_total", dimensions: [("destination", name)]).increment(by: count)
            destination = name
        case .failed(let name, _, _), .deadLettered(let name, _, _):
            Counter(label: "keepalive_delivery_failures_total", dimensions: [("destination", name)]).increment()
            destination = name
        case .waitingForLease, .tookOver, .journalError:
            return
        }
        // The depth after the change: one indexed count in the journal, once per batch, on the
        // journal's read queue (never after a commit in flight), not on the thread that told the event.
        let (journal, writer) = (journal, writer)
        journal.readQueue.async {
            if let depth = try? (writer.map { try $0.waiting(for: destination) } ?? journal.status(of: destination).depth) {
                Gauge(label: "keepalive_delivery_queue_depth", dimensions: [("destination", destination)])
                    .record(depth)
            }
        }
    }
}
