import Glibc
import KeepAliveCore
import KeepAliveMonitoring
import Logging

/// The host's one watch of the receiver, serving every app's conditions: open while some app's
/// conditions are watched, and left while the device is stationary (a fix every few minutes
/// instead, so gpsd can close the device), as ``LocationMonitor/monitor(_:pausing:handler:paused:forEachFix:)``
/// does for one monitor.
final class HostLocationWatch: Sendable {
    /// The fix and when it reached the host (``HostLocationWatch/monotonicNow``).
    typealias Arrival = (fix: Location, received: Double)

    /// The device's own monitor, with no conditions: it decides when the device is stationary.
    private let device: LocationMonitor
    private let job: OwnedTasks.Handle?

    /// Starts watching `source`, as a job of `tasks` (the host's run); each fix goes to
    /// `observe` at once (on the watch's task) and to `arrivals`, in order, with its arrival time.
    init(
        tasks: OwnedTasks,
        source: any LocationSource,
        pause: StationaryPause?,
        retryInterval: Duration = .seconds(5),
        logger: Logger,
        observe: @escaping @Sendable (Location) -> Void = { _ in },
        arrivals: AsyncStream<Arrival>.Continuation,
        failed: @escaping @Sendable (String) -> Void
    ) {
        // In memory, with no conditions: it cannot fail.
        let device = try! LocationMonitor(named: "host", logger: logger)
        self.device = device
        job = tasks.addCancellable {
            let manager = LocationManager(source: source, logger: logger)
            while !Task.isCancelled {
                do {
                    try await device.monitor(manager, pausing: pause, forEachFix: { fix in
                        observe(fix)
                        arrivals.yield((fix, Self.monotonicNow()))
                    })
                } catch {
                    failed("the location watch: \(error); again in \(retryInterval.secondsText)")
                }
                try? await Task.sleep(for: retryInterval)
            }
        }
    }

    deinit { job?.cancel() }

    /// Whether the watch is left for the stationary pause.
    var isPaused: Bool { device.isPaused }

    /// Leaves the watch.
    func stop() { job?.cancel() }

    /// Seconds of `CLOCK_MONOTONIC`, the clock every process reads alike.
    static func monotonicNow() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}

extension HostLocationWatch {
    /// The host's watch: its source and pause as configured, each fix handed to every one of
    /// `observers` as it arrives.
    convenience init(
        _ configuration: AppHost.Configuration,
        tasks: OwnedTasks,
        logger: Logger,
        observers: Locked<[@Sendable (Location) -> Void]>,
        arrivals: AsyncStream<Arrival>.Continuation,
        failed: @escaping @Sendable (String) -> Void
    ) {
        self.init(
            tasks: tasks,
            source: configuration.locationSource(),
            pause: configuration.stationaryPause,
            logger: logger,
            observe: { fix in for observer in observers.read({ $0 }) { observer(fix) } },
            arrivals: arrivals,
            failed: failed
        )
    }
}
