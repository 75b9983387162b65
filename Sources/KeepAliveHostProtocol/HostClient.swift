import Dispatch
public import FoundationEssentials
public import KeepAliveCore
public import KeepAliveMonitoring

/// A connection to `keepalive host`: an app's own (after ``hello(app:)``), or the
/// compositor's (launch, move, status).
public final class HostClient: Sendable {
    /// The host's socket.
    public let socket: URL
    private let connection: UnixSocket
    private let state = Locked(ClientState())
    /// What the host tells the app, in order; ends when the connection closes.
    public let notices: AsyncStream<HostNotice>

    private struct ClientState {
        var nextID = 0
        var pending: [Int: CheckedContinuation<HostReply, Never>] = [:]
        var closed = false
    }

    /// Connects to the host.
    ///
    /// - Throws: ``HostError/Code/hostUnreachable`` naming the socket and how to start a host.
    public init(socket: URL = HostProtocol.defaultSocket) throws(HostError) {
        self.socket = socket
        let socketPath = socket.path
        do {
            connection = try UnixSocket.connect(to: socketPath)
        } catch {
            throw HostError(
                .hostUnreachable,
                "\(error.message): start one with `keepalive host`, or name it with --socket"
            )
        }
        let (notices, feed) = AsyncStream.makeStream(of: HostNotice.self)
        self.notices = notices
        let (connection, state) = (connection, state)
        DispatchQueue(label: "keepalive.host.client").async {
            let decoder = HostProtocol.decoder()
            connection.readLines(limit: HostProtocol.maximumLineLength) { line in
                let data = Data(line)
                if let notice = try? decoder.decode(HostNotice.self, from: data) {
                    feed.yield(notice)
                } else if let reply = try? decoder.decode(HostReply.self, from: data) {
                    let waiter = state.withLock { state in
                        reply.id.flatMap { state.pending.removeValue(forKey: $0) }
                    }
                    waiter?.resume(returning: reply)
                }
                return true
            }
            feed.finish()
            let waiters = state.withLock { state in
                state.closed = true
                defer { state.pending.removeAll() }
                return Array(state.pending.values)
            }
            for waiter in waiters {
                waiter.resume(returning: HostReply(id: nil, ok: false, error: "the host closed the connection"))
            }
        }
    }

    deinit { connection.shutDown() }

    /// Sends a request and waits for its reply.
    ///
    /// - Throws: ``HostError`` with the host's own words when it refuses.
    @discardableResult
    public func send(_ request: HostRequest) async throws(HostError) -> HostReply {
        var request = request
        let sent = Locked<Int?>(nil)
        // A cancelled wait ends at once: a task group that stops never waits on a host that went quiet.
        let cancel: @Sendable () -> Void = { [state] in
            guard let id = sent.withLock({ $0 }), let waiter = state.withLock({ $0.pending.removeValue(forKey: id) }) else { return }
            waiter.resume(returning: HostReply(id: id, ok: false, error: "cancelled before the host answered"))
        }
        let reply = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<HostReply, Never>) in
                let id: Int? = state.withLock { state in
                    guard !state.closed else { return nil }
                    state.nextID += 1
                    state.pending[state.nextID] = continuation
                    return state.nextID
                }
                guard let id else {
                    return continuation.resume(
                        returning: HostReply(id: nil, ok: false, error: "the host closed the connection")
                    )
                }
                sent.withLock { $0 = id }
                request.id = id
                if Task.isCancelled || !connection.write(HostProtocol.encode(request)) {
                    let waiter = state.withLock { $0.pending.removeValue(forKey: id) }
                    waiter?.resume(returning: HostReply(id: id, ok: false, error: "the host closed the connection"))
                }
            }
        } onCancel: {
            cancel()
        }
        guard reply.ok else { throw HostError(.notPermitted, reply.error ?? "the host refused \(request.op.rawValue)") }
        return reply
    }

    /// Sends a request without waiting (an app's report from a synchronous callback); the
    /// host handles a connection's requests in the order sent.
    public func post(_ request: HostRequest) {
        connection.write(HostProtocol.encode(request))
    }

    /// Sends a typed command without waiting (``post(_:)``).
    package func post(_ command: HostCommand) { post(command.request) }

    /// Names this process's app to the host (its process must run in that app).
    ///
    /// - Returns: the rules the app runs under, its state, and the background modes it was launched with.
    public func hello(
        app: String
    ) async throws(HostError) -> (profile: ExecutionProfile, state: String, modes: BackgroundModes) {
        let reply = try await send(HostCommand.hello(app: app).request)
        guard let profile = reply.profile else { throw HostError(.badRequest, "the host did not send the app's rules") }
        let modes = BackgroundModes(parsing: (reply.modes ?? []).joined(separator: ",")) ?? []
        return (profile, reply.state ?? "active", modes)
    }

    /// Asks the host to watch `conditions` (by identifier) for this app, also while it is frozen
    /// or not running (after ``hello(app:)``; needs location authorized always, or when in use
    /// in the foreground). Events come as `location-event` ``notices``.
    ///
    /// - Returns: the identifiers of all the app's conditions now.
    @discardableResult
    public func monitor(
        _ conditions: [String: MonitorCondition],
        assuming state: MonitorState = .unknown
    ) async throws(HostError) -> [String] {
        try await send(HostCommand.monitor(app: nil, conditions: conditions, assuming: state).request).identifiers ?? []
    }

    /// Stops watching the conditions `identifiers` for this app.
    ///
    /// - Returns: the identifiers of the app's conditions left.
    @discardableResult
    public func stopMonitoring(_ identifiers: [String]) async throws(HostError) -> [String] {
        try await send(HostCommand.unmonitor(app: nil, identifiers: identifiers).request).identifiers ?? []
    }

    /// Names this app's sockets whose first data wakes it while the host keeps it frozen (its
    /// push: a server's command waiting on them), replacing the ones named before. Say it
    /// before each suspension: a reconnected socket is a new descriptor.
    ///
    /// - Throws: ``HostError`` when the host cannot watch them (more than
    ///   ``HostProtocol/maximumWakeSockets``, not sockets, or a kernel without pidfd_getfd).
    public func wakeOnData(from sockets: [Int32]) async throws(HostError) {
        _ = try await send(HostCommand.wakeOnData(sockets: sockets).request)
    }

    /// Closes the connection.
    public func close() { connection.shutDown() }
}
