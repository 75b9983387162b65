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
        await locationManager.receiverPower?.settled()  // the receiver powered down before the device sleeps
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

    /// A one-shot fix, journaled, then told as a poll. The fix is waited for as long as the
    /// receiver's start needs (``ReceiverPowerSwitch/fixWait(within:)``: twice its measured time
    /// to first fix, within `bound`), and where its ephemeris would be stale within the hour it
    /// keeps tracking long enough to collect it, so that the next wakes start hot.
    public func runWork(_ kind: WakeKind, within bound: Duration) async -> Bool {
        let started = ContinuousClock.now
        do {
            let fix = try await locationManager.requestLocation(timeout: locationManager.receiverPower?.fixWait(within: bound) ?? bound)
            await refreshEphemerisIfDue(within: bound - started.duration(to: .now))
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

    /// Keeps the receiver tracking for the ephemeris's collection when it would be stale within
    /// the hour and `remaining` allows it: about 30 s once every few hours, against 24 s more
    /// at every wake of a warm start.
    private func refreshEphemerisIfDue(within remaining: Duration) async {
        guard let power = locationManager.receiverPower, let refresh = power.ephemerisRefresh(nextWake: .seconds(3600)),
            refresh > .zero, refresh <= remaining
        else { return }
        power.refreshing(for: refresh)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await locationManager.updates { _ in } }
            group.addTask { try? await ContinuousClock().sleep(for: refresh) }
            await group.next()
            group.cancelAll()
        }
    }

    /// Delivery given `bound` to send what waits, then on again.
    public func deliverNow(within bound: Duration) async {
        await delivery?.pause(within: bound)
        delivery?.resume()
    }
}
