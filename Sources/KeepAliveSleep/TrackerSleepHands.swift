public import KeepAliveCore
import Dispatch
import FoundationEssentials

/// The device's sleep done with a tracker's parts: its location manager, its journal and its
/// delivery (what ``KeepAliveService`` gives the keeper, and what a tracker made of the
/// library's parts gives ``DeviceSleepKeeper/follow(_:journal:delivery:authorization:configuration:notice:)``).
public struct TrackerSleepHands: SleepHands {
    let locationManager: LocationManager
    let journal: (any FixRecorder)?
    let delivery: (any PausableWork)?
    let polled: @Sendable (Result<Location, LocationError>) -> Void
    let failed: @Sendable (String) -> Void
    /// Where the journal's commit and gap are written: a commit waits for the disk, and the
    /// concurrency pool's threads wait for nothing.
    private static let journalQueue = DispatchQueue(label: "LocationKeepAlive.sleep.journal")

    /// Hands for `locationManager`, `journal` and `delivery`; a wake's fix is told to `polled`
    /// once journaled (or why none came), and what failed to `failed`.
    public init(
        locationManager: LocationManager, journal: (any FixRecorder)? = nil, delivery: (any PausableWork)? = nil,
        polled: @escaping @Sendable (Result<Location, LocationError>) -> Void = { _ in },
        failed: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.locationManager = locationManager
        self.journal = journal
        self.delivery = delivery
        self.polled = polled
        self.failed = failed
    }

    /// The watch closed first (gpsd may power the receiver down, and no fix comes after the
    /// commit), then the journal committed, then delivery given its bound.
    public func prepareForSleep(within bound: Duration) async {
        locationManager.closeSessionForSuspension()
        let journal = journal
        do { try await Self.journalQueue.awaiting { () throws in try journal?.commitNow() } } catch {
            failed("before the sleep, the journal: \(error)")
        }
        await delivery?.pause(within: bound)
    }

    /// The gap marked, the watch reopened (nothing that waited in its socket is taken as
    /// new), delivery on again.
    public func resumed(asleep: Duration) async {
        let (end, journal) = (Date(), journal)
        do { try await Self.journalQueue.awaiting { () throws in try journal?.recordGap(from: end - asleep.seconds, to: end, reason: "asleep") } } catch {
            failed("after the sleep, the journal: \(error)")
        }
        locationManager.resumeAfterSuspension()
        delivery?.resume()
    }

    /// A one-shot fix, journaled, then told as a poll.
    public func runWork(_ kind: WakeKind, within bound: Duration) async -> Bool {
        do {
            let fix = try await locationManager.requestLocation(timeout: bound)
            let polled = polled
            guard let journal else {
                polled(.success(fix))
                return true
            }
            do { try journal.record(fix) { polled(.success(fix)) } } catch {
                failed("\(error)")
                polled(.success(fix))
            }
            return true
        } catch let error as LocationError {
            polled(.failure(error))
        } catch {
            failed("the wake for \(kind.rawValue): \(error)")
        }
        return false
    }

    /// Delivery given `bound` to send what waits, then on again.
    public func deliverNow(within bound: Duration) async {
        await delivery?.pause(within: bound)
        delivery?.resume()
    }
}
