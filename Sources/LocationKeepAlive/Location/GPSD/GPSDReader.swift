import Dispatch

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
    static func open(host: String, port: Int) async throws(LocationError) -> GPSDReader {
        let queue = DispatchQueue(label: "LocationKeepAlive.gpsd.\(host):\(port)")
        let result: Result<GPSDConnection, LocationError> = await withCheckedContinuation { continuation in
            queue.async {
                do throws(LocationError) {
                    let connection = try GPSDConnection(host: host, port: port)
                    guard connection.watch() else {
                        throw LocationError.gpsdUnreachable(host: host, port: port, reason: "WATCH was refused")
                    }
                    continuation.resume(returning: .success(connection))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return GPSDReader(connection: try result.get(), queue: queue)
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
