import CWakeAlarm
import Dispatch
import Glibc
import KeepAliveCore

/// The wake alarm: a timer on the boot clock that wakes the device from sleep when it expires
/// (Linux's `timerfd` on `CLOCK_BOOTTIME_ALARM`, which needs `CAP_WAKE_ALARM`: root has it, a
/// service gets it with `AmbientCapabilities=CAP_WAKE_ALARM`). While the device is awake it
/// only expires; asleep, the kernel programs the RTC to wake the device for it.
public final class WakeAlarm: Sendable {
    private let descriptor: Int32
    /// Whether ``watchExpiries(_:)``'s thread runs.
    private let watching = Locked(false)

    /// Opens the alarm's timer, disarmed.
    /// - Throws: ``SleepError`` when the process may not wake the device.
    public init() throws(SleepError) {
        let descriptor = cwake_create(CWAKE_CLOCK_BOOTTIME_ALARM)
        guard descriptor >= 0 else {
            let code = cwake_errno()
            throw .setup(
                code == EPERM
                    ? "a wake alarm needs CAP_WAKE_ALARM: run as root, give the service AmbientCapabilities=CAP_WAKE_ALARM, or turn wakes off with --wake none"
                    : "cannot make a wake alarm (timerfd on CLOCK_BOOTTIME_ALARM): \(String(cString: strerror(code)))"
            )
        }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Arms the alarm for `time` on the boot clock (``BootClock``), replacing the one armed before.
    public func arm(at time: Duration) throws(SleepError) {
        let (seconds, attoseconds) = max(time, .nanoseconds(1)).components
        guard cwake_set(descriptor, Int(seconds), Int(attoseconds / 1_000_000_000)) == 0 else {
            throw .failed("cannot arm the wake alarm: \(String(cString: strerror(cwake_errno())))")
        }
    }

    /// Disarms it.
    public func disarm() { _ = cwake_set(descriptor, 0, 0) }

    /// Calls `expired` at each expiry, on a thread of the alarm's own, with the device held
    /// awake from the expiry (in the kernel, during the resume it causes) until `expired` has
    /// returned (`EPOLLWAKEUP`, with `CAP_BLOCK_SUSPEND`; without it nothing holds): a wakelock
    /// taken there bridges the wake to the work, whatever suspends the device. Until
    /// ``stopWatching()``.
    /// - Throws: ``SleepError`` when the kernel refuses the watch.
    func watchExpiries(_ expired: @escaping @Sendable () -> Void) throws(SleepError) {
        let set = cwake_expiry_set()
        guard set >= 0, cwake_watch_expiry(set, descriptor) == 0 else {
            let code = cwake_errno()
            if set >= 0 { close(set) }
            throw .setup("cannot watch the wake alarm (epoll): \(String(cString: strerror(code)))")
        }
        watching.withLock { $0 = true }
        // The thread holds the alarm: its descriptor stays open until the thread has ended.
        DispatchQueue(label: "LocationKeepAlive.sleep.alarm").async {
            while self.watching.withLock({ $0 }) {
                guard cwake_await_expiry(set) == 0 else { continue }  // EINTR
                var expirations: UInt64 = 0
                _ = read(self.descriptor, &expirations, MemoryLayout<UInt64>.size)
                if self.watching.withLock({ $0 }) { expired() }
            }
            close(set)
        }
    }

    /// Ends ``watchExpiries(_:)``'s thread (the alarm is armed to expire at once, to end its
    /// wait) and disarms the alarm.
    func stopWatching() {
        guard watching.withLock({ watching in defer { watching = false }; return watching }) else { return }
        _ = cwake_set(descriptor, 0, 1)
    }
}

/// The boot clock (`CLOCK_BOOTTIME`): the time since the device booted, asleep or not. Swift's
/// `ContinuousClock` reads the same clock on Linux; this one gives its absolute value, which a
/// wake alarm is armed with.
public enum BootClock {
    /// The time since boot.
    public static func now() -> Duration {
        var time = timespec()
        clock_gettime(CLOCK_BOOTTIME, &time)
        return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
    }

    /// The time the device has spent asleep since it booted: the boot clock less the monotonic
    /// one (`CLOCK_MONOTONIC`, which stops while the device sleeps). It grows only in a sleep.
    public static func asleepSinceBoot() -> Duration {
        let boot = now()
        return boot - monotonic()
    }

    /// The monotonic clock (`CLOCK_MONOTONIC`): the time since boot, the sleeps left out.
    public static func monotonic() -> Duration {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
    }
}
