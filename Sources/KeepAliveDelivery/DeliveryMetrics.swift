import CoreMetrics
public import KeepAliveJournal

/// What delivery counts, through swift-metrics, beside a service's own metrics: fixes
/// delivered and failures by destination, and each destination's queue depth after a change.
public struct DeliveryMetrics: Sendable {
    private let journal: FixJournal

    /// Metrics of delivery from `journal` (whose queue depths the gauges read).
    public init(journal: FixJournal) {
        self.journal = journal
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
        // The depth after the change: one indexed count in the journal, once per batch.
        if let depth = try? journal.status(of: destination).depth {
            Gauge(label: "keepalive_delivery_queue_depth", dimensions: [("destination", destination)])
                .record(depth)
        }
    }
}
