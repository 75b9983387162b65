import Dispatch
import FoundationEssentials
import KeepAliveCore
import KeepAliveSleep

/// The service's hands for the device's sleep: its journal, delivery and location manager.
struct ServiceSleepHands: SleepHands {
    let journal: (any FixRecorder)?
    let delivery: (any PausableWork)?
    let locationManager: LocationManager
    /// Records a fix, then tells it (``FixRecorder/record(_:then:)``).
    let record: @Sendable (Location, @escaping @Sendable () -> Void) -> Void
    let emit: @Sendable (KeepAliveService.Event) -> Void
    /// Where the journal's commit and gap are written: a commit waits for the disk, and the
    /// concurrency pool's threads wait for nothing.
    private static let journalQueue = DispatchQueue(label: "LocationKeepAlive.sleep.journal")

    /// The watch closed first (gpsd may power the receiver down, and no fix comes after the
    /// commit), then the journal committed, then delivery given its bound.
    func prepareForSleep(within bound: Duration) async {
        locationManager.closeSessionForSuspension()
        let journal = journal
        do { try await Self.journalQueue.awaiting { () throws in try journal?.commitNow() } } catch {
            emit(.error("before the sleep, the journal: \(error)"))
        }
        await delivery?.pause(within: bound)
    }

    /// The gap marked, the watch reopened (nothing that waited in its socket is taken as
    /// new), delivery on again.
    func resumed(asleep: Duration) async {
        let (end, journal) = (Date(), journal)
        do { try await Self.journalQueue.awaiting { () throws in try journal?.recordGap(from: end - asleep.seconds, to: end, reason: "asleep") } } catch {
            emit(.error("after the sleep, the journal: \(error)"))
        }
        locationManager.resumeAfterSuspension()
        delivery?.resume()
    }

    /// A one-shot fix, journaled and told as a poll; the monitoring strategy's own watch,
    /// open again, sees it too.
    func runWork(_ kind: WakeKind, within bound: Duration) async -> Bool {
        do {
            let fix = try await locationManager.requestLocation(timeout: bound)
            let emit = emit
            record(fix) { emit(.poll(.success(fix))) }
            return true
        } catch let error as LocationError {
            emit(.poll(.failure(error)))
        } catch {
            emit(.error("the wake for \(kind.rawValue): \(error)"))
        }
        return false
    }

    func deliverNow(within bound: Duration) async {
        await delivery?.pause(within: bound)
        delivery?.resume()
    }
}

extension KeepAliveService.Configuration {
    /// The keeper's configuration with the strategy's periodic work (unless set): the
    /// hybrid's and continuous location's poll at the hybrid's interval, the monitoring
    /// strategy's check and the scheduled refresh each as often as their budget allows.
    var deviceSleepWithWork: DeviceSleepKeeper.Configuration? {
        guard var sleep = deviceSleep else { return nil }
        // As often as the budget set allows (`--wake-budget`), not the default's.
        func allowed(_ kind: WakeKind) -> Duration { (sleep.options.budgets[kind] ?? kind.defaultBudget).interval }
        let work: (WakeKind, Duration)? =
            switch strategy {
            case .hybrid, .continuousLocation: (.poll, hybrid.interval)
            case .monitoring: (.monitoring, allowed(.monitoring))
            case .scheduledRefresh: (.refresh, allowed(.refresh))
            default: nil
            }
        if let (kind, period) = work, sleep.options.every[kind] == nil { sleep.options.every[kind] = period }
        return sleep
    }
}
