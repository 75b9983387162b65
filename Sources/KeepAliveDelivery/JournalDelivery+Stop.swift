public import KeepAliveCore
import KeepAliveJournal
import Logging

extension JournalDelivery {
    /// Runs `work` (a program's own loop, appending fixes to the journal) with delivery beside
    /// it, and stops as `keepalive run` does: when the work ends or `stop` is asked (SIGINT or
    /// SIGTERM by default), the work is cancelled, what waits is delivered for up to
    /// `stopTimeout`, and delivery stops. Given a ``JournalWriter`` (`init(journal:destinations:writer:...)`),
    /// it runs the writer's commits too (``JournalWriter/run()``: don't run them yourself), commits
    /// what the writer holds before the delivery's last wait, and where each destination stands
    /// after it; ``JournalWriter/tally`` then says what was stored and what, if the journal could
    /// not be written, was only held.
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
            if let writer { delivering.addTask { await writer.run() } }
            let failure = await workUntilStopped(work, armed) { [logger] in
                logger.notice("stop asked: delivering what waits, for up to \(stopTimeout.secondsText)\(armed.stillStoppable)")
            }
            await writer?.commit()
            let undelivered = await drain(within: stopTimeout)
            delivering.cancelAll()  // the writer's run ends with a commit: where each destination stands
            return (undelivered, failure)
        }
        if !undelivered.isEmpty {
            var named: [String] = []
            for name in undelivered { named.append(name + (await deliveredElsewhere(name).map { " (\($0))" } ?? "")) }
            logger.warning(
                "stopping: fixes undelivered after \(stopTimeout.secondsText) to \(named.joined(separator: ", ")); journaled, sent at the next start or by keepalive upload"
            )
        }
        if let failure { throw failure }
        return undelivered
    }
}

extension JournalDelivery {
    /// "delivered by another process, OWNER since T", when another holds `destination`'s lease.
    fileprivate func deliveredElsewhere(_ destination: String) async -> String? {
        guard let deliverer = deliverers.first(where: { $0.destination == destination }),
            let holder = try? await journal.performReading({ journal throws(JournalError) in try journal.leaseHolder(of: destination) }),
            holder.owner != deliverer.owner
        else { return nil }
        return "delivered by another process, \(holder)"
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
