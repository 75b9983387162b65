import CoreMetrics

/// What a running ``KeepAliveService`` counts, through swift-metrics: no cost until the
/// program bootstraps a backend (`keepalive run --metrics` bootstraps Prometheus). The metrics
/// and their dimensions are listed in the documentation's command-line tool article.
struct ServiceMetrics: Sendable {
    private let fixes = Counter(label: "keepalive_fixes_total")
    private let pollsOK = Counter(label: "keepalive_polls_total", dimensions: [("result", "ok")])
    private let pollsFailed = Counter(label: "keepalive_polls_total", dimensions: [("result", "failed")])
    private let pulsesOK = Counter(label: "keepalive_pulses_total", dimensions: [("result", "ok")])
    private let pulsesFailed = Counter(label: "keepalive_pulses_total", dimensions: [("result", "failed")])
    private let losses = Counter(label: "keepalive_gpsd_connection_losses_total")
    private let reconnections = Counter(label: "keepalive_gpsd_reconnections_total")
    private let suspensions = Counter(label: "keepalive_suspensions_total")
    private let background = Gauge(label: "keepalive_background")
    private let journal: FixJournal?

    init(journal: FixJournal?) {
        self.journal = journal
        background.record(0)
    }

    func record(_ event: KeepAliveService.Event) {
        switch event {
        case .fix:
            fixes.increment()
        case .poll(.success):
            pollsOK.increment()
            fixes.increment()
        case .poll(.failure):
            pollsFailed.increment()
        case .pulse(_, _, let error):
            (error == nil ? pulsesOK : pulsesFailed).increment()
        case .status(.connectionLost):
            losses.increment()
        case .status(.reconnecting):
            reconnections.increment()
        case .lifecycle(.suspended):
            suspensions.increment()
        case .lifecycle(.didEnterBackground):
            background.record(1)
        case .lifecycle(.willEnterForeground), .lifecycle(.didBecomeActive):
            background.record(0)
        case .delivery(let delivery):
            record(delivery)
        default:
            break
        }
    }

    private func record(_ event: DeliveryEvent) {
        let destination: String
        switch event {
        case .delivered(let name, let count, _):
            Counter(label: "keepalive_delivered_total", dimensions: [("destination", name)]).increment(by: count)
            destination = name
        case .failed(let name, _, _), .deadLettered(let name, _, _):
            Counter(label: "keepalive_delivery_failures_total", dimensions: [("destination", name)]).increment()
            destination = name
        case .waitingForLease, .tookOver, .journalError:
            return
        }
        // The depth after the change: one indexed count in the journal, once per batch.
        if let depth = try? journal?.status(of: destination).depth {
            Gauge(label: "keepalive_delivery_queue_depth", dimensions: [("destination", destination)])
                .record(depth)
        }
    }
}
