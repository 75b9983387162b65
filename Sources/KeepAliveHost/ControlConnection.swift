import Dispatch
import FoundationEssentials
import Glibc
import KeepAliveCore

/// One client of the host's control socket, and who it is.
public final class ControlConnection: Sendable {
    let socket: UnixSocket
    let peer: UnixSocket.Peer
    let number: Int
    /// Came in on the apps' socket: it may say hello and report, nothing else.
    let isApp: Bool

    init(socket: UnixSocket, peer: UnixSocket.Peer, number: Int, isApp: Bool) {
        self.socket = socket
        self.peer = peer
        self.number = number
        self.isApp = isApp
    }

    /// The caller's process id, as the kernel saw it connect.
    public var pid: Int32 { peer.pid }

    func send(_ reply: HostReply) { socket.write(HostProtocol.encode(reply)) }
    func send(_ notice: HostNotice) { socket.write(HostProtocol.encode(notice)) }
    func close() { socket.shutDown() }

    /// After a refusal: the reply is read to its end, then EOF.
    func closeForWriting() { socket.shutDownWriting() }
}

/// Accepts connections on a socket of the host's and hands each request, in order, to `handle`.
///
/// The control socket admits root, the host's user and members of the socket's group (by the
/// kernel's word on the caller: `SO_PEERCRED` and `/proc/PID/status`), whatever the socket
/// file's mode became: anyone else is told why and disconnected. The apps' socket (mode 0666,
/// so that apps running as any user reach it) admits anyone, for `hello` and an app's reports
/// only: `hello` checks that the caller's process is in the app's group.
final class ControlServer: Sendable {
    let path: String
    private let listener: UnixSocket
    private let queue = DispatchQueue(label: "keepalive.host.accept")
    /// The socket's group, whose members are admitted.
    private let group: (name: String, id: gid_t)?
    /// The apps' socket.
    private let isForApps: Bool

    init(path: String, mode: UInt32, group name: String? = nil, forApps: Bool = false) throws(HostError) {
        self.path = path
        isForApps = forApps
        if let name {
            guard let id = Self.groupID(name) else {
                throw HostError(.socketFailed, "no group \(name) on this machine (see getent group)")
            }
            group = (name, id)
        } else {
            group = nil
        }
        listener = try UnixSocket.listen(at: path, mode: mode_t(mode), group: group?.id)
    }

    /// Why `peer` may not use the host, or `nil` when it may.
    private func refusal(of peer: UnixSocket.Peer) -> String? {
        if isForApps || peer.uid == 0 || peer.uid == UInt32(geteuid()) { return nil }
        if let group, peer.gid == group.id || ProcFS.groups(of: peer.pid).contains(group.id) { return nil }
        let groupText = group.map { " and group \($0.name)" } ?? ""
        return "uid \(peer.uid) may not use this host: its socket admits uid \(geteuid())\(groupText) only"
    }

    private static func groupID(_ name: String) -> gid_t? {
        var entry = Glibc.group()
        var found: UnsafeMutablePointer<Glibc.group>?
        var buffer = [CChar](repeating: 0, count: 16_384)
        let result = buffer.withUnsafeMutableBufferPointer { getgrnam_r(name, &entry, $0.baseAddress!, $0.count, &found) }
        if result == 0, found != nil { return entry.gr_gid }
        return gid_t(name)
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
                let connection = ControlConnection(socket: client, peer: peer, number: number, isApp: self.isForApps)
                if let refusal = self.refusal(of: peer) {
                    connection.send(HostReply(id: nil, ok: false, error: refusal))
                    connection.closeForWriting()
                    DispatchQueue(label: "keepalive.host.refused").async { client.drain() }
                    continue
                }
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
