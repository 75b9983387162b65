import Dispatch

/// Reads the messages of one gpsd connection off the cooperative thread pool, and hands each
/// to a handler on the reader's thread.
///
/// The reader is one work item on a private serial queue that blocks in `gps_waiting` (a
/// `select` on the socket) and drains libgps while it has buffered data, like a plain C client.
/// A message costs one thread wake-up: a `DispatchSource` cost two (the event thread, then a
/// worker) and a stream per message one more (see BENCHMARKS.md). ``close()`` from any thread
/// shuts the socket down, which wakes the reader; only the reader's thread closes it.
final class GPSDReader: Sendable {
    private let closed: AsyncStream<Never>
    private let connection: GPSDConnection
    /// Set once the reader has closed the connection: after that the socket is not touched.
    private let finished = Flag()

    private final class Flag: Sendable {
        let isSet = Locked(false)
    }

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
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation {
                (continuation: CheckedContinuation<Result<GPSDConnection, LocationError>, Never>) in
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
        return GPSDReader(connection: try result.get(), queue: queue, onMessage: onMessage)
    }

    /// One connection attempt, finished exactly once: by its outcome or by cancellation.
    private final class Attempt: Sendable {
        private let state = Locked<
            (
                waiter: CheckedContinuation<Result<GPSDConnection, LocationError>, Never>?,
                result: Result<GPSDConnection, LocationError>?
            )
        >((nil, nil))

        func wait(with continuation: CheckedContinuation<Result<GPSDConnection, LocationError>, Never>) {
            let early: Result<GPSDConnection, LocationError>? = state.withLock { state in
                if let result = state.result { return result }
                state.waiter = continuation
                return nil
            }
            if let early { continuation.resume(returning: early) }
        }

        /// - Returns: `false` when the attempt was already finished (the outcome is not used).
        @discardableResult
        func finish(with result: Result<GPSDConnection, LocationError>) -> Bool {
            let (waiter, isFirst) = state.withLock {
                state -> (CheckedContinuation<Result<GPSDConnection, LocationError>, Never>?, Bool) in
                guard state.result == nil else { return (nil, false) }
                state.result = result
                defer { state.waiter = nil }
                return (state.waiter, true)
            }
            waiter?.resume(returning: result)
            return isFirst
        }
    }

    private init(
        connection: GPSDConnection,
        queue: DispatchQueue,
        onMessage: @escaping @Sendable (GPSDMessage) -> Void
    ) {
        let (closed, finish) = AsyncStream.makeStream(of: Never.self)
        self.closed = closed
        self.connection = connection
        queue.async { [finished] in
            while connection.waitForData(seconds: 60) || connection.isOpen {
                if !connection.readAvailable(onMessage) { break }
            }
            finished.isSet.withLock { isSet in
                isSet = true
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
        finished.isSet.withLock { isSet in
            if !isSet { connection.interrupt() }
        }
    }

    deinit { close() }
}
