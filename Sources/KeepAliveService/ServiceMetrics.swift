import CoreMetrics
import KeepAliveCore
import KeepAliveSleep

/// What a running ``KeepAliveService`` counts, through swift-metrics: no cost until the
/// program bootstraps a backend (`keepalive run --metrics` bootstraps Prometheus). The metrics
/// (delivery counts its own: `DeliveryMetrics`) and their dimensions are listed in the documentation's command-line tool article.
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
    private let heldAwake = Gauge(label: "keepalive_device_held_awake")
    private let heldAwakeSeconds = FloatingPointCounter(label: "keepalive_device_held_awake_seconds_total")
    private let sleeps = Counter(label: "keepalive_device_sleeps_total")
    private let receiverOn = Gauge(label: "keepalive_receiver_on")
    private let receiverSwitches = Counter(label: "keepalive_receiver_switches_total")
    private let receiverFailures = Counter(label: "keepalive_receiver_switch_failures_total")
    private let receiverOnSeconds = FloatingPointCounter(label: "keepalive_receiver_on_seconds_total")
    private let timeToFix = Dictionary(
        uniqueKeysWithValues: ReceiverStartKind.allCases.map {
            ($0, Gauge(label: "keepalive_receiver_time_to_fix_seconds", dimensions: [("start", $0.rawValue)]))
        }
    )
    /// Whether the device is held by a wakelock alone (no logind lock to count).
    private let heldByWakelock = Locked(false)
    private let wakes = Dictionary(
        uniqueKeysWithValues: WakeKind.allCases.map { ($0, Counter(label: "keepalive_device_wakes_total", dimensions: [("kind", $0.rawValue)])) }
    )

    init() {
        background.record(0)
        heldAwake.record(0)
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
        case .sleep(.followed(let way, _)):
            // With both ways, logind's lock and the wakelock are one hold: counted once, as the lock.
            heldByWakelock.withLock { $0 = way == .wakelocks }
        case .sleep(.lockTaken(.block, _)):
            heldAwake.record(1)
        case .sleep(.wakelockTaken) where heldByWakelock.withLock({ $0 }):
            heldAwake.record(1)
        case .sleep(.wakelockReleased(_, _, let held)) where heldByWakelock.withLock({ $0 }):
            heldAwake.record(0)
            heldAwakeSeconds.increment(by: held.seconds)
        case .sleep(.lockReleased(.block, _, let held)):
            heldAwake.record(0)
            heldAwakeSeconds.increment(by: held.seconds)
        case .sleep(.sleepAnnounced), .sleep(.sleptUnannounced):
            sleeps.increment()
        case .sleep(.woke(let kind, _)):
            wakes[kind]?.increment()
        case .receiver(.on):
            receiverOn.record(1)
            receiverSwitches.increment()
        case .receiver(.off(_, let wasOn)):
            receiverOn.record(0)
            receiverSwitches.increment()
            receiverOnSeconds.increment(by: wasOn.seconds)
        case .receiver(.fixed(let start, let time)):
            timeToFix[start]?.record(time.seconds)
        case .receiver(.failed):
            receiverFailures.increment()
        default:
            break
        }
    }
}
