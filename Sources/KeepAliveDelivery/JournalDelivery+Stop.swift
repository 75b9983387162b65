public import KeepAliveCore
import Logging

extension JournalDelivery {
    /// Runs `work` (a program's own loop, appending fixes to the journal) with delivery beside
    /// it, and stops as `keepalive run` does: when the work ends or `stop` is asked (SIGINT or
    /// SIGTERM by default), the work is cancelled, what waits is delivered for up to
    /// `stopTimeout`, and delivery stops.
    ///
    /// ```swift
    /// let undelivered = try await delivery.run(until: .interrupt) {
    ///     for try await case .location(let fix) in manager.updates() { try journal.append(fix) }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - stop: what ends the work besides its own end: ``StopRequest/interrupt`` (the signals
    ///     are trapped for the run: a second one exits at once, status 130), or your own.
    ///   - stopTimeout: how long the stop waits for what is left to be delivered. Keep it under
    ///     systemd's `TimeoutStopSec` (90 s by default) in a service.
    ///   - work: the program's loop; it is cancelled by the stop (a cancelled `for try await`
    ///     over `manager.updates()` ends).
    /// - Returns: the destinations with fixes still waiting (none: every fix delivered). What
    ///   waits stays in the journal: it is sent at the next start, or by `keepalive upload`.
    /// - Throws: what `work` threw, other than its cancellation by the stop, once what waits was
    ///   delivered the same way.
    public func run(
        until stop: StopRequest = .interrupt,
        stopTimeout: Duration = .seconds(5),
        _ work: @escaping @Sendable () async throws -> Void
    ) async throws -> [String] {
        let armed = await stop.arm()
        defer { armed.disarm() }
        let (undelivered, failure) = await withDiscardingTaskGroup { delivering in
            delivering.addTask { await self.run() }
            let failure = await workUntilStopped(work, armed) { [logger] in
                logger.notice("stop asked: delivering what waits, for up to \(stopTimeout.secondsText)\(armed.stillStoppable)")
            }
            let undelivered = await drain(within: stopTimeout)
            delivering.cancelAll()
            return (undelivered, failure)
        }
        if !undelivered.isEmpty {
            logger.warning(
                "stopping: fixes undelivered after \(stopTimeout.secondsText) to \(undelivered.joined(separator: ", ")); journaled, sent at the next start or by keepalive upload"
            )
        }
        if let failure { throw failure }
        return undelivered
    }
}

/// Runs `work` until it ends or the stop is asked (then cancelled, once `stopping` said so);
/// what it threw, if it was not that cancellation.
private func workUntilStopped(
    _ work: @escaping @Sendable () async throws -> Void,
    _ stop: StopRequest.Armed,
    stopping: @escaping @Sendable () -> Void
) async -> (any Error)? {
    await withTaskGroup(of: (any Error)?.self) { group in
        group.addTask {
            do {
                try await work()
                return nil
            } catch {
                return error
            }
        }
        group.addTask {
            if await stop.requested() { stopping() }
            return nil
        }
        // The first to end: the work (its error, or nil) or the stop (nil).
        if let failure = await group.next() ?? nil {
            group.cancelAll()
            return failure
        }
        group.cancelAll()
        // The other: the stop's cancelled wait, or the work cancelled by the stop, whose
        // CancellationError (if it throws one) is the stop's doing, not a failure.
        let last = await group.next() ?? nil
        return last is CancellationError ? nil : last
    }
}
