import Dispatch
import Glibc
import KeepAliveCore
import KeepAliveHostProtocol

/// Accepts connections on a socket of the host's and hands each request, in order, to `handle`,
/// on one event loop: no thread per client, so no number of idle, slow or frozen clients holds
/// up the others (Dispatch sources over non-blocking calls: epoll, in the library the host
/// already runs on).
///
/// The control socket admits root, the host's user and members of the socket's group (by the
/// kernel's word on the caller: `SO_PEERCRED` and `/proc/PID/status`), whatever the socket
/// file's mode became: anyone else is told why and disconnected. The apps' socket (mode 0666,
/// so that apps running as any user reach it) admits anyone, for `hello` and an app's reports
/// only: `hello` checks that the caller's process is in the app's group. Both count each
/// caller's connections against its app, or outside every app against its user
/// (``ControlLimits``).
final class ControlServer: Sendable {
    let path: String
    private let listener: UnixSocket
    private let loop: Loop
    /// Each connection's requests, served as a child task of ``serve()``.
    private let connections = OwnedTasks()

    /// The server's state, on its queue only (hence unchecked `Sendable`).
    private final class Loop: @unchecked Sendable {
        let queue = DispatchQueue(label: "keepalive.host.control")
        let limits: ControlLimits
        let isForApps: Bool
        let group: (name: String, id: gid_t)?
        let owner: @Sendable (Int32) -> String?
        let refused: @Sendable (String) -> Void
        var accepting: (any DispatchSourceRead)?
        var sweeping: (any DispatchSourceTimer)?
        /// When the sweep is set to run (`nil`: not set, no channel has a deadline).
        var sweepAt: DispatchTime?
        var channels: [Int: ControlChannel] = [:]
        var counts: [Caller: Int] = [:]
        var number = 0
        var isAcceptingPaused = false
        var saidOutOfDescriptors = false
        /// Refusals told since the last report, per caller: one line per caller in 10 s.
        var untold: [Caller: (count: Int, since: DispatchTime)] = [:]

        init(
            limits: ControlLimits,
            isForApps: Bool,
            group: (name: String, id: gid_t)?,
            owner: @escaping @Sendable (Int32) -> String?,
            refused: @escaping @Sendable (String) -> Void
        ) {
            self.limits = limits
            self.isForApps = isForApps
            self.group = group
            self.owner = owner
            self.refused = refused
        }
    }

    /// Whom a connection counts against.
    private enum Caller: Hashable {
        case app(String)
        case user(UInt32)
    }

    /// - Parameters:
    ///   - owner: the app a process belongs to, if any (its connections count against it).
    ///   - refused: told why a connection was refused (at most one line per caller in 10 s).
    init(
        path: String,
        mode: UInt32,
        group name: String? = nil,
        forApps: Bool = false,
        limits: ControlLimits = ControlLimits(),
        owner: @escaping @Sendable (Int32) -> String? = { _ in nil },
        refused: @escaping @Sendable (String) -> Void = { _ in }
    ) throws(HostError) {
        self.path = path
        var group: (name: String, id: gid_t)?
        if let name {
            guard let id = Self.groupID(name) else {
                throw HostError(.socketFailed, "no group \(name) on this machine (see getent group)")
            }
            group = (name, id)
        }
        listener = try UnixSocket.listen(at: path, mode: mode_t(mode), group: group?.id)
        _ = fcntl(listener.descriptor, F_SETFL, fcntl(listener.descriptor, F_GETFL) | O_NONBLOCK)
        loop = Loop(limits: limits, isForApps: forApps, group: group, owner: owner, refused: refused)
    }

    private static func groupID(_ name: String) -> gid_t? {
        var entry = Glibc.group()
        var found: UnsafeMutablePointer<Glibc.group>?
        var buffer = [CChar](repeating: 0, count: 16_384)
        let result = buffer.withUnsafeMutableBufferPointer { getgrnam_r(name, &entry, $0.baseAddress!, $0.count, &found) }
        if result == 0, found != nil { return entry.gr_gid }
        return gid_t(name)
    }

    /// Accepts until ``stop()``. Each connection is served by one task, a child of
    /// ``serve()``, so one client's requests are handled in the order sent.
    func start(
        handle: @escaping @Sendable (HostRequest, ControlConnection) async -> HostReply?,
        closed: @escaping @Sendable (ControlConnection) async -> Void
    ) {
        let (loop, listener, connections) = (loop, listener, connections)
        loop.queue.async {
            let accepting = DispatchSource.makeReadSource(fileDescriptor: listener.descriptor, queue: loop.queue)
            accepting.setEventHandler {
                for _ in 0..<64 {  // then the clients' turn
                    guard let client = listener.acceptNow() else {
                        if errno == EMFILE || errno == ENFILE { Self.pauseAccepting(loop) }
                        return
                    }
                    Self.admit(client, loop: loop, connections: connections, handle: handle, closed: closed)
                }
            }
            accepting.activate()
            loop.accepting = accepting
            // The timeouts are enforced when the earliest falls due, not on a tick: a host whose
            // apps are frozen, their connections idle, is not woken for them.
            let sweeping = DispatchSource.makeTimerSource(queue: loop.queue)
            sweeping.setEventHandler {
                loop.sweepAt = nil
                let now = DispatchTime.now()
                for channel in loop.channels.values { channel.enforceTimeouts(at: now) }
                Self.rearm(loop)
            }
            sweeping.schedule(deadline: .distantFuture)
            sweeping.activate()
            loop.sweeping = sweeping
        }
    }

    private static func admit(
        _ client: Int32,
        loop: Loop,
        connections: OwnedTasks,
        handle: @escaping @Sendable (HostRequest, ControlConnection) async -> HostReply?,
        closed: @escaping @Sendable (ControlConnection) async -> Void
    ) {
        guard let peer = UnixSocket.peer(of: client) else {
            Glibc.close(client)
            return
        }
        loop.number += 1
        let number = loop.number
        let channel = ControlChannel(descriptor: client, queue: loop.queue, limits: loop.limits, forApps: loop.isForApps)
        let connection = ControlConnection(channel: channel, peer: peer, number: number, isApp: loop.isForApps)
        let caller = loop.owner(peer.pid).map(Caller.app) ?? .user(peer.uid)
        let refusal = refusal(of: peer, loop: loop) ?? limitRefusal(of: caller, loop: loop)
        let (lines, feed) = AsyncStream.makeStream(of: [UInt8].self)
        loop.channels[number] = channel
        if refusal == nil { loop.counts[caller, default: 0] += 1 }
        channel.start(
            line: { feed.yield($0) },
            inputEnded: { feed.finish() },
            finished: {
                loop.channels[number] = nil
                if refusal == nil {
                    loop.counts[caller, default: 1] -= 1
                    if loop.counts[caller] == 0 { loop.counts[caller] = nil }
                }
            },
            changed: { rearm(loop) }
        )
        defer { rearm(loop) }
        if let refusal {
            channel.refuse(refusal)
            tell(refusal, about: caller, loop: loop)
            feed.finish()
            return
        }
        let served = connections.add {
            for await line in lines {
                defer { channel.lineHandled() }
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
            channel.finishIfDone()
        }
        if !served { channel.close() }  // the server has finished: nobody serves it
    }

    /// Serves each connection's requests as a child task, until ``finish()``; then waits for
    /// the last connection's end.
    func serve() async { await connections.run() }

    /// Whether a sweep is set: a timeout of some connection will fall due (what tests read).
    var isSweepSet: Bool { loop.queue.sync { loop.sweepAt != nil } }

    /// Sets the sweep for the earliest deadline of the channels, or none when no timeout runs.
    private static func rearm(_ loop: Loop) {
        let next = loop.channels.values.compactMap(\.nextDeadline).min()
        guard next != loop.sweepAt else { return }
        loop.sweepAt = next
        loop.sweeping?.schedule(deadline: next ?? .distantFuture, leeway: .milliseconds(100))
    }

    /// Out of descriptors: the waiting connections stay in the kernel's queue for 100 ms,
    /// rather than the accept source spinning on them (said once).
    private static func pauseAccepting(_ loop: Loop) {
        guard let accepting = loop.accepting, !loop.isAcceptingPaused else { return }
        loop.isAcceptingPaused = true
        accepting.suspend()
        if !loop.saidOutOfDescriptors {
            loop.saidOutOfDescriptors = true
            loop.refused("the host is out of descriptors (RLIMIT_NOFILE): connections wait in the socket's queue")
        }
        loop.queue.asyncAfter(deadline: .now() + 0.1) {
            guard loop.isAcceptingPaused, let accepting = loop.accepting else { return }
            loop.isAcceptingPaused = false
            accepting.resume()
        }
    }

    /// Why `peer` may not use this socket, or `nil` when it may.
    private static func refusal(of peer: UnixSocket.Peer, loop: Loop) -> String? {
        if loop.isForApps || peer.uid == 0 || peer.uid == UInt32(geteuid()) { return nil }
        if let group = loop.group, peer.gid == group.id || ProcFS.groups(of: peer.pid).contains(group.id) { return nil }
        let groupText = loop.group.map { " and group \($0.name)" } ?? ""
        return "uid \(peer.uid) may not use this host: its socket admits uid \(geteuid())\(groupText) only"
    }

    private static func limitRefusal(of caller: Caller, loop: Loop) -> String? {
        let open = loop.counts[caller] ?? 0
        switch caller {
        case .app(let app) where open >= loop.limits.connectionsPerApp:
            return "app \(app) has \(open) connections open to the host, the most an app may: close one first"
        case .user(let uid) where open >= loop.limits.connectionsPerUser:
            return "uid \(uid) has \(open) connections open to the host outside every app, the most a user may: close one first"
        default:
            return nil
        }
    }

    /// Says why a connection was refused: the first refusal for a caller at once, then at
    /// most one line in 10 s with how many more.
    private static func tell(_ refusal: String, about caller: Caller, loop: Loop) {
        let now = DispatchTime.now()
        if let last = loop.untold[caller], now.uptimeNanoseconds - last.since.uptimeNanoseconds < 10_000_000_000 {
            loop.untold[caller] = (last.count + 1, last.since)
            return
        }
        let more = loop.untold[caller]?.count ?? 0
        loop.untold[caller] = (0, now)
        loop.refused(refusal + (more > 0 ? " (and \(more) more refused in the last 10 s)" : ""))
    }

    func stop() {
        let loop = loop
        loop.queue.sync {
            if loop.isAcceptingPaused {  // a suspended source may not be cancelled
                loop.isAcceptingPaused = false
                loop.accepting?.resume()
            }
            loop.accepting?.cancel()
            loop.sweeping?.cancel()
            loop.accepting = nil
            loop.sweeping = nil
        }
        listener.shutDown()
        unlink(path)
    }

    /// Stops accepting, closes every connection and ends ``serve()`` once each has ended.
    func finish() {
        stop()
        let loop = loop
        loop.queue.sync {
            for channel in loop.channels.values { channel.close() }
        }
        connections.finish()
    }
}

extension ControlServer {
    /// The host's two sockets: its control socket (its mode and group as configured) and the
    /// apps' socket (any process may connect; only `hello` and an app's own reports are served).
    static func hostSockets(
        _ configuration: AppHost.Configuration,
        owner: @escaping @Sendable (Int32) -> String?,
        refused: @escaping @Sendable (String) -> Void
    ) throws(HostError) -> (control: ControlServer, apps: ControlServer) {
        let control = try ControlServer(
            path: configuration.socketPath, mode: configuration.socketMode, group: configuration.socketGroup,
            limits: configuration.limits, owner: owner, refused: refused
        )
        let apps = try ControlServer(
            path: configuration.appSocketPath, mode: 0o666, forApps: true, limits: configuration.limits, owner: owner, refused: refused
        )
        return (control, apps)
    }
}
