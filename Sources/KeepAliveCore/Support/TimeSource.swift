/// A clock with its instant type erased: elapsed time since creation, and sleeping.
///
/// Lets the manager and the sources take any `Clock<Duration>` (the real continuous
/// clock, or a test clock) without making every type generic.
package struct TimeSource: Sendable {
    /// Time elapsed on the clock since this value was made.
    package let now: @Sendable () -> Duration
    /// Sleeps for a duration on the clock; throws when the task is cancelled.
    package let sleep: @Sendable (Duration) async throws -> Void
    /// Sleeps until an elapsed time (a deadline fixed earlier, so a late start does not move it).
    package let sleepUntil: @Sendable (Duration) async throws -> Void

    package init<C: Clock>(_ clock: C) where C.Duration == Duration {
        let start = clock.now
        now = { start.duration(to: clock.now) }
        sleep = { duration in try await clock.sleep(until: clock.now.advanced(by: duration), tolerance: nil) }
        sleepUntil = { deadline in
            let instant = start.advanced(by: deadline)
            guard instant > clock.now else { return try Task.checkCancellation() }
            try await clock.sleep(until: instant, tolerance: nil)
        }
    }
}
