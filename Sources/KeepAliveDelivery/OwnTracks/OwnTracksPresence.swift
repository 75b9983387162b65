import FoundationEssentials
import KeepAliveCore
import Logging

/// The device's retained status on `TOPIC/status`, kept true by a small MQTT connection of its
/// own (client id `…-presence`, no subscription): it publishes `online` (retained) when it
/// connects, `offline` (retained) when the device stops, and its will, also retained, says
/// `offline` when the device goes away without a goodbye (killed, its link lost, frozen past
/// the keepalive). A subscriber that comes later is never told a stopped device is online.
///
/// A connection of its own because MQTT gives a connection one will, and the device session's
/// is OwnTracks' `lwt` on the base topic.
final class OwnTracksPresence: Sendable {
    let settings: MQTTSettings
    let encryption: OwnTracksEncryption?
    let logger: Logger
    private let client: MosquittoClient
    private let acknowledged = ObservedState(Set<Int32>())

    /// How long a goodbye waits for the broker to take the `offline` status.
    static let goodbyeTimeout: Duration = .seconds(2)

    /// - Parameter started: when the device's session began (the will's `tst`, as the `lwt`'s).
    init(settings: MQTTSettings, password: String?, encryption: OwnTracksEncryption?, started: Date, logger: Logger) throws {
        self.settings = settings
        self.encryption = encryption
        self.logger = logger
        let topic = settings.topic + "/status"
        let will = try Self.text(.offline, at: started, settings, encryption)
        let acknowledged = acknowledged
        let published = Locked<@Sendable () -> Void>({})
        client = try MosquittoClient(
            settings,
            clientID: settings.clientID + "-presence",
            cleanSession: true,
            password: password,
            will: MosquittoClient.Will(topic: topic, payload: will, retained: true),
            callbacks: MosquittoClient.Callbacks(
                connected: { code, _ in if code == 0 { published.withLock { $0 }() } },
                disconnected: { _, _ in },
                published: { id in acknowledged.update { _ = $0.insert(id) } }
            )
        )
        published.withLock { announce in
            announce = { [client, settings, encryption] in
                guard let text = try? Self.text(.online, at: Date(), settings, encryption) else { return }
                _ = client.publish(topic: topic, payload: text, retained: true)
            }
        }
    }

    /// Connects (and reconnects by itself), announcing `online` at each connection.
    func start() {
        if let error = client.start(host: settings.host, port: settings.port, keepAlive: OwnTracksSession.keepAlive) {
            logger.info("the device's presence is not connected yet", metadata: ["reason": "\(error)"])
        }
    }

    /// Publishes `offline` (retained), waits up to ``goodbyeTimeout`` for the broker to take it,
    /// then disconnects (so the will is not published).
    func goodbye() async {
        if let text = try? Self.text(.offline, at: Date(), settings, encryption),
            case .success(let id) = client.publish(topic: settings.topic + "/status", payload: text, retained: true)
        {
            // Not cancelled with the session: the goodbye is what its end is for.
            let taken = await Task { [acknowledged] in
                await acknowledged.wait(until: { $0.contains(id) }, timeout: Self.goodbyeTimeout)
            }.value
            if !taken {
                logger.info("the broker did not take the device's offline status in time", metadata: ["broker": "\(settings.host):\(settings.port)"])
            }
        }
        client.stop()
    }

    private static func text(
        _ state: OwnTracksMessage.Status.State, at time: Date, _ settings: MQTTSettings, _ encryption: OwnTracksEncryption?
    ) throws(OwnTracksError) -> String {
        let status = OwnTracksMessage.Status(
            linux: .init(state: state, time: Int64(time.timeIntervalSince1970.rounded(.down)), commands: settings.takesCommands)
        )
        return try OwnTracksSession.text(status, encryption)
    }
}
