import Dispatch
import FoundationEssentials
public import Logging
import KeepAliveCore
public import KeepAliveJournal

/// OwnTracks over MQTT: each fix a `location` message, QoS 1, on the destination's topic, each
/// region's event a `transition` on `TOPIC/event` (see the "OwnTracks" article),
/// through libmosquitto with a persistent session and a client id stable across restarts.
///
/// libmosquitto keeps no queue on disk and may still deliver a message published while
/// disconnected, so the journal stays the only source of truth: this transport publishes only
/// while connected, and a record counts as delivered only once its PUBACK came back.
public final class MQTTTransport: DeliveryTransport {
    /// The broker, topic and credentials.
    public let settings: MQTTSettings
    let clientID: String
    let acknowledgementTimeout: Duration
    let logger: Logger
    private let client = Locked<MosquittoClient?>(nil)
    private let state = ObservedState(Connection())
    private let reachable = Locked<(@Sendable () -> Void)?>(nil)
    private let supervisor = Locked<Task<Void, Never>?>(nil)
    /// How long the client may stay disconnected before it is replaced by a new one.
    let reconnectLimit: Duration

    struct Connection: Sendable {
        /// `nil` while connected.
        var disconnectedSince: ContinuousClock.Instant? = .now
        var isConnected: Bool { disconnectedSince == nil }
        var lastError: String?
        var acknowledged: Set<Int32> = []
    }

    /// A client for one broker and topic; it connects on the first send.
    ///
    /// - Parameters:
    ///   - settings: the broker, topic, credentials and TLS.
    ///   - role: added to the client id (`keepalive upload` uses `upload`), so two
    ///     processes never take each other's session over.
    ///   - acknowledgementTimeout: a batch not acknowledged by then counts as failed.
    ///   - reconnectLimit: a client disconnected this long is replaced by a new one.
    ///   - logger: where connections and failures are logged.
    public init(
        settings: MQTTSettings,
        role: String? = nil,
        acknowledgementTimeout: Duration = .seconds(15),
        reconnectLimit: Duration = .seconds(20),
        logger: Logger = Logger(label: "LocationKeepAlive.mqtt")
    ) {
        self.reconnectLimit = reconnectLimit
        self.settings = settings
        self.clientID = role.map { "\(settings.clientID)-\($0)" } ?? settings.clientID
        self.acknowledgementTimeout = acknowledgementTimeout
        self.logger = logger
    }

    /// Calls `handler` each time the broker connection comes back.
    public func onReachable(_ handler: @escaping @Sendable () -> Void) {
        reachable.withLock { $0 = handler }
    }

    /// Publishes each record (QoS 1); delivered once the broker acknowledged them all.
    public func send(_ records: [JournalRecord]) async -> DeliveryResult {
        if let failure = await waitUntilReady() { return DeliveryResult(acknowledged: 0, failure: failure) }
        let client: MosquittoClient
        do throws(DeliveryError) {
            client = try connectedClient()  // the one waited for, unless closed or replaced since
        } catch {
            return DeliveryResult(acknowledged: 0, failure: .unavailable("\(error)"))
        }
        let encryption: OwnTracksEncryption?
        do throws(DeliveryError) {
            encryption = try settings.keyFile.map { file throws(DeliveryError) in try OwnTracksEncryption(keyFile: file.path) }
        } catch {
            return DeliveryResult(acknowledged: 0, failure: .unavailable("\(error)"))
        }
        state.update { $0.acknowledged.removeAll() }
        // A record's message id, or nil for one with no OwnTracks message (done as it is).
        var messageIDs: [Int32?] = []
        var publishError: String?
        for record in records {
            guard let payload = OwnTracksPayload.of(record, trackerID: settings.trackerID) else {
                messageIDs.append(nil)
                continue
            }
            do throws(OwnTracksError) {
                switch client.publish(topic: settings.topic + payload.subtopic, payload: try payload.text(encryptedWith: encryption)) {
                case .success(let id): messageIDs.append(id)
                case .failure(let error): publishError = "\(error)"
                }
            } catch {
                publishError = "\(error)"
            }
            if publishError != nil { break }
        }
        let wanted = Set(messageIDs.compactMap { $0 })
        let allAcknowledged = await state.wait(until: { wanted.isSubset(of: $0.acknowledged) }, timeout: acknowledgementTimeout)
        let acknowledged = state.update { connection -> Set<Int32> in
            defer { connection.acknowledged.removeAll() }
            return connection.acknowledged
        }
        let count = messageIDs.prefix { id in id.map(acknowledged.contains) ?? true }.count
        if allAcknowledged, publishError == nil { return DeliveryResult(acknowledged: count) }
        let reason =
            publishError
            ?? "no PUBACK from \(settings.host):\(settings.port) within \(acknowledgementTimeout) for \(wanted.count - acknowledged.intersection(wanted).count) of \(wanted.count)"
        return DeliveryResult(acknowledged: count, failure: .unavailable(reason))
    }

    /// Connects (once) and waits up to 5 s for the broker to accept the connection.
    public func waitUntilReady() async -> DeliveryFailure? {
        do throws(DeliveryError) {
            _ = try connectedClient()
        } catch {
            return .unavailable("\(error)")
        }
        guard await state.wait(until: { $0.isConnected }, timeout: .seconds(5)) else {
            let reason = state.value.lastError ?? "no answer"
            return .unavailable("not connected to \(settings.host):\(settings.port): \(reason)")
        }
        return nil
    }

    /// Disconnects from the broker.
    public func close() async {
        supervisor.withLock { task in
            task?.cancel()
            task = nil
        }
        let client = client.withLock { client in
            defer { client = nil }
            return client
        }
        if state.value.isConnected { client?.stop() } else { client.map(Self.retire) }
        state.update { $0.disconnectedSince = .now }
    }

    /// Stops a client on a queue of its own, so a thread stuck in `connect` never blocks the
    /// caller (cancelling it instead is unsafe: a thread cancelled inside libmosquitto may hold
    /// its locks).
    private static func retire(_ client: MosquittoClient) {
        retirement.async { client.stop() }
    }

    private static let retirement = DispatchQueue(label: "LocationKeepAlive.mqtt.retire")

    /// Replaces a client that stayed disconnected longer than `reconnectLimit`: libmosquitto's
    /// own reconnection blocks in `connect` for as long as the kernel retries a SYN (about two
    /// minutes) when the broker's link is down, and so could miss the link coming back.
    private func supervise() {
        guard supervisor.withLock({ $0 == nil }) else { return }
        let task = Task { [weak self, reconnectLimit] in
            while !Task.isCancelled {
                try? await DispatchClock().sleep(for: reconnectLimit / 4)
                guard let self, let since = state.value.disconnectedSince, since.duration(to: .now) > reconnectLimit else { continue }
                let stale = client.withLock { client in
                    defer { client = nil }
                    return client
                }
                stale.map(Self.retire)
                state.update { $0.disconnectedSince = .now }
                logger.info("replacing an MQTT client disconnected too long", metadata: ["broker": "\(settings.host):\(settings.port)"])
                _ = try? connectedClient(supervised: false)
            }
        }
        supervisor.withLock { $0 = task }
    }

    /// The client, created and connecting on first use (the password file is read then).
    private func connectedClient(supervised: Bool = true) throws(DeliveryError) -> MosquittoClient {
        if let client = client.withLock({ $0 }) { return client }
        let password = try settings.passwordFile.map { file throws(DeliveryError) in try PasswordFile.read(file.path) }
        let callbacks = MosquittoClient.Callbacks(
            connected: { [state, reachable, logger, settings] code, reason in
                state.update { connection in
                    if code == 0 { connection.disconnectedSince = nil }
                    connection.lastError = code == 0 ? nil : "the broker refused the connection: \(reason)"
                }
                logger.info(
                    code == 0 ? "connected to the MQTT broker" : "the MQTT broker refused the connection",
                    metadata: ["broker": "\(settings.host):\(settings.port)", "reason": "\(reason)"]
                )
                if code == 0 { reachable.read { $0 }?() }
            },
            disconnected: { [state] code, reason in
                state.update { connection in
                    if connection.isConnected { connection.disconnectedSince = .now }
                    // A refusal (bad password, say) says more than the disconnection after it.
                    if code != 0, connection.lastError == nil { connection.lastError = "connection lost: \(reason)" }
                }
            },
            published: { [state] id in state.update { _ = $0.acknowledged.insert(id) } }
        )
        let client: MosquittoClient
        do {
            client = try MosquittoClient(settings, clientID: clientID, cleanSession: false, password: password, callbacks: callbacks)
        } catch {
            throw .badDestination("mqtt://\(settings.host):\(settings.port)/\(settings.topic)", "\(error)")
        }
        if let error = client.start(host: settings.host, port: settings.port) {
            state.update { $0.lastError = error }
        }
        self.client.withLock { $0 = client }
        if supervised { supervise() }
        return client
    }
}
