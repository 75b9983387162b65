import Dispatch
import Synchronization

/// Streams the messages of one gpsd connection, read off the cooperative thread pool.
///
/// A `DispatchSource` watches the socket on a private serial queue and drains libgps while it
/// has buffered data. The source's handlers capture the connection, not the reader, so closing
/// never has to run on the queue that is delivering.
final class GPSDReader: Sendable {
    let messages: AsyncStream<GPSDMessage>
    // Dispatch sources are thread-safe (cancel may be called from any thread), but Dispatch
    // does not mark the protocol Sendable.
    nonisolated(unsafe) private let source: any DispatchSourceRead

    /// Opens, watches and starts reading. Blocking work runs on the reader's queue.
    ///
    /// Cancelling the calling task abandons the attempt at once; a connection that completes
    /// after that is closed on the reader's queue.
    static func open(host: String, port: Int) async throws(LocationError) -> GPSDReader {
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
        return GPSDReader(connection: try result.get(), queue: queue)
    }

    /// One connection attempt, finished exactly once: by its outcome or by cancellation.
    private final class Attempt: Sendable {
        private let state = Mutex<
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

    private init(connection: GPSDConnection, queue: DispatchQueue) {
        let (stream, continuation) = AsyncStream.makeStream(
            of: GPSDMessage.self,
            bufferingPolicy: .bufferingNewest(1024)
        )
        messages = stream
        source = DispatchSource.makeReadSource(fileDescriptor: connection.fileDescriptor, queue: queue)
        source.setEventHandler { [source] in
            let isOpen = connection.readAvailable { continuation.yield($0) }
            if !isOpen { source.cancel() }
        }
        source.setCancelHandler {
            connection.close()
            continuation.finish()
        }
        source.activate()
    }

    /// Stops reading and closes the connection; the message stream then finishes.
    func close() { source.cancel() }

    deinit { source.cancel() }
}
