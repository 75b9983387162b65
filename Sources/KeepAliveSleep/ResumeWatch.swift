import CWakeAlarm
import Dispatch
import Glibc

/// Tells each resume of the device from a sleep, announced or not, the moment the kernel
/// resumes: a timer on the wall clock that the kernel cancels whenever the wall clock jumps
/// against the monotonic one, as it does at every resume (and at a clock set, which the time
/// asleep tells apart: ``BootClock/asleepSinceBoot()``). Read on Dispatch's own event thread:
/// nothing waits on the concurrency pool, and nothing polls.
final class ResumeWatch: Sendable {
    // Dispatch sources are thread-safe (cancel may be called from any thread), but Dispatch
    // does not mark the protocol Sendable. The timer is read and armed only by the handler.
    nonisolated(unsafe) private let source: any DispatchSourceRead

    /// Starts watching; `told` is called on a queue of the watch's own at each resume.
    /// - Throws: ``SleepError`` when the kernel refuses the timer (then nothing is told).
    init(_ told: @escaping @Sendable () -> Void) throws(SleepError) {
        let descriptor = cwake_create(CWAKE_CLOCK_REALTIME)
        guard descriptor >= 0 else { throw .setup("cannot watch for resumes (timerfd on CLOCK_REALTIME): \(String(cString: strerror(cwake_errno())))") }
        guard cwake_watch_clock_jumps(descriptor) == 0 else {
            let code = cwake_errno()
            close(descriptor)
            throw .setup("cannot watch for resumes (TFD_TIMER_CANCEL_ON_SET): \(String(cString: strerror(code)))")
        }
        source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: DispatchQueue(label: "LocationKeepAlive.sleep.resumes"))
        source.setEventHandler {
            // Readable only when cancelled by a jump (ECANCELED); armed again for the next.
            var expirations: UInt64 = 0
            _ = read(descriptor, &expirations, MemoryLayout<UInt64>.size)
            _ = cwake_watch_clock_jumps(descriptor)
            told()
        }
        source.setCancelHandler { close(descriptor) }
        source.activate()
    }

    /// Stops watching and closes the timer.
    func stop() { source.cancel() }

    deinit { source.cancel() }
}
