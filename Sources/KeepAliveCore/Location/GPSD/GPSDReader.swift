import Dispatch

/// Reads the messages of one gpsd connection off the cooperative thread pool, and hands each
/// to a handler on the reader's thread.
///
/// The reader is one work item on a private serial queue that blocks in a `poll` on the socket
/// and drains libgps until it has nothing more, like a plain C client (not in `gps_waiting`,
/// whose `select` cannot watch a descriptor of 1,024 or more).
/// A message costs one thread wake-up: a `DispatchSource` cost two (the event thread, then a
/// worker) and a stream per message one more (see BENCHMARKS.md). ``close()`` from any thread
/// shuts the socket down, which wakes the reader; only the reader's thread closes it.
final class GPSDReader: Sendable {
    private let closed: AsyncStream<Never>
    /// The connection until the reader has closed it, `nil` after (the socket is not touched
    /// then). Set under the lock in `init`, so a ``close()`` from any thread, cancellation
    /// handlers included, sees the connection whole.
    private let openConnection = Locked<GPSDConnection?>(nil)

    /// Opens, watches and starts reading. Blocking work runs on the reader's queue.
    ///
    /// Cancelling the calling task abandons the attempt at once; a connection that completes
    /// after that is closed on the reader's queue.
    /// - Parameter onMessage: called on the reader's queue, one message at a time.
    static func open(
        host: String,
        port: Int,
        onMessage: @escaping @Sendable (GPSDMessage) -> Void
    ) async throws(LocationError) -> GPSDReader {
        let queue = DispatchQueue(label: "LocationKeepAlive.gpsd.\(host):\(port)")
        let attempt = Attempt()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                attempt.wait(with: continuation)
                queue.async {
                    let outcome: Result<GPSDConnection, LocationError>
                    do throws(LocationError) {
                        let connection = try GPSDConnection(host: host, port: port)
                        guard connection.watch() else {
                            throw LocationError.gpsdUnreachable(host: host, port: port, reason: "WATCH was refused")
                        }
                        // gpsd's current fix right away (gpsd answers a POLL with fixes only for a
                        // client that watches); a failed POLL only means waiting for the next TPV.
                        _ = connection.poll()
                        outcome = .success(connection)
                    } catch {
                        outcome = .failure(error)
                    }
                    if !attempt.finish(with: outcome), case .success(let late) = outcome { late.close() }
                }
            }
        } onCancel: {
            attempt.finish(
                with: .failure(.gpsdUnreachable(host: host, port: port, reason: "connection attempt abandoned"))
            )
        }
        let abandoned = LocationError.gpsdUnreachable(host: host, port: port, reason: "connection attempt abandoned")
        let connection = try (attempt.outcome ?? .failure(abandoned)).get()
        return GPSDReader(connection: connection, queue: queue, onMessage: onMessage)
    }

    /// One connection attempt, finished exactly once: by its outcome or by cancellation.
    ///
    /// The waiter is only woken; it reads the outcome under the lock the outcome was written
    /// under, so what the reader's queue did to the connection before is seen whole by the
    /// thread that goes on with it (and by ThreadSanitizer, which does not see through a
    /// continuation).
    private final class Attempt: Sendable {
        private let state = Locked<
            (waiter: CheckedContinuation<Void, Never>?, result: Result<GPSDConnection, LocationError>?)
        >((nil, nil))

        /// Resumes `continuation` once the attempt is finished (at once if it is).
        func wait(with continuation: CheckedContinuation<Void, Never>) {
            let isFinished = state.withLock { state in
                if state.result != nil { return true }
                state.waiter = continuation
                return false
            }
            if isFinished { continuation.resume() }
        }

        /// - Returns: `false` when the attempt was already finished (the outcome is not used).
        @discardableResult
        func finish(with result: Result<GPSDConnection, LocationError>) -> Bool {
            let (waiter, isFirst) = state.withLock { state -> (CheckedContinuation<Void, Never>?, Bool) in
                guard state.result == nil else { return (nil, false) }
                state.result = result
                defer { state.waiter = nil }
                return (state.waiter, true)
            }
            waiter?.resume()
            return isFirst
        }

        /// How the attempt finished: read once ``wait(with:)`` has resumed (`nil` before).
        var outcome: Result<GPSDConnection, LocationError>? { state.withLock { $0.result } }
    }

    private init(
        connection: GPSDConnection,
        queue: DispatchQueue,
        onMessage: @escaping @Sendable (GPSDMessage) -> Void
    ) {
        let (closed, finish) = AsyncStream.makeStream(of: Never.self)
        self.closed = closed
        openConnection.withLock { $0 = connection }
        queue.async { [openConnection] in
            while connection.waitForData(seconds: 60) || connection.isOpen {
                if !connection.readAvailable(onMessage) { break }
            }
            openConnection.withLock { open in
                open = nil
                connection.close()
            }
            finish.finish()
        }
    }

    /// Returns when the connection has closed: gpsd went away, or ``close()`` was called.
    func waitUntilClosed() async {
        for await _ in closed {}
    }

    /// Stops reading and closes the connection; safe from any thread, any number of times.
    func close() {
        openConnection.withLock { $0?.interrupt() }
    }

    deinit { close() }
}
