import Dispatch
import FoundationEssentials
import Glibc

/// One client of the host's control socket, and who it is.
public final class ControlConnection: Sendable {
    let socket: UnixSocket
    let peer: UnixSocket.Peer
    let number: Int

    init(socket: UnixSocket, peer: UnixSocket.Peer, number: Int) {
        self.socket = socket
        self.peer = peer
        self.number = number
    }

    /// The caller's process id, as the kernel saw it connect.
    public var pid: Int32 { peer.pid }

    func send(_ reply: HostReply) { socket.write(HostProtocol.encode(reply)) }
    func send(_ notice: HostNotice) { socket.write(HostProtocol.encode(notice)) }
    func close() { socket.shutDown() }

    /// After a refusal: the reply is read to its end, then EOF.
    func closeForWriting() { socket.shutDownWriting() }
}

/// Accepts connections on the control socket and hands each request, in order, to `handle`.
final class ControlServer: Sendable {
    let path: String
    private let listener: UnixSocket
    private let queue = DispatchQueue(label: "keepalive.host.accept")

    init(path: String, mode: UInt32) throws(HostError) {
        self.path = path
        listener = try UnixSocket.listen(at: path, mode: mode_t(mode))
    }

    /// Accepts until ``stop()``. Each connection reads on a thread of its own and is served by
    /// one task, so one client's requests are handled in the order sent.
    func start(
        handle: @escaping @Sendable (HostRequest, ControlConnection) async -> HostReply?,
        closed: @escaping @Sendable (ControlConnection) async -> Void
    ) {
        let listener = listener
        queue.async {
            var number = 0
            while let client = listener.accept() {
                number += 1
                guard let peer = client.peer() else { continue }
                let connection = ControlConnection(socket: client, peer: peer, number: number)
                let (lines, feed) = AsyncStream.makeStream(of: [UInt8].self)
                DispatchQueue(label: "keepalive.host.connection").async {
                    client.readLines(limit: HostProtocol.maximumLineLength) { line in
                        if case .terminated = feed.yield(line) { return false }
                        return true
                    }
                    feed.finish()
                    client.drain()
                }
                Task {
                    for await line in lines where !line.isEmpty {
                        let request: HostRequest
                        do {
                            request = try HostProtocol.decodeRequest(line)
                        } catch {
                            connection.send(HostReply(id: nil, ok: false, error: error.message))
                            connection.closeForWriting()
                            break
                        }
                        if let reply = await handle(request, connection) { connection.send(reply) }
                    }
                    await closed(connection)
                }
            }
        }
    }

    func stop() {
        listener.shutDown()
        unlink(path)
    }
}
