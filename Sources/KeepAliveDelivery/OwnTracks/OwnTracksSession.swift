public import FoundationEssentials
public import Logging
import KeepAliveCore

/// The device's own MQTT session with an OwnTracks broker, beside the delivery's (which comes
/// and goes with the journal's lease): its presence and its remote commands.
///
/// - Its will is `{"_type": "lwt", "tst": FIRST_CONNECTION}` on the base topic, which the broker
///   publishes when the device goes away without a goodbye (a crash, a lost link, frozen past
///   the keepalive).
/// - Its retained `{"_type": "status", ...}` on `TOPIC/status` says `online` while it is
///   connected and `offline` once it stopped or went away (kept by `OwnTracksPresence`).
/// - It subscribes to `TOPIC/cmd` at QoS 1 (unless `cmd=false` on the destination) with a
///   persistent session, so the broker keeps the commands sent while the device is away.
///   Each is read by ``OwnTracksCommand/parse(_:encryption:)``; a retained message on the
///   topic is old state, not a command, and is ignored.
/// - Answers (`waypoints`, `dump`) go out on it with ``publish(_:on:)``.
///
/// Its client id is the destination's with `-device`, so it never takes the delivery's
/// session over. With a key file every payload it sends is encrypted, and only commands
/// sealed with the key are taken.
public final class OwnTracksSession: Sendable {
    /// The broker, topic, credentials and key.
    public let settings: MQTTSettings
    let logger: Logger
    private let client = Locked<MosquittoClient?>(nil)
    private let started: Date

    /// The session's MQTT keepalive, in seconds: the broker drops a silent (frozen) device after
    /// 1.5 times it.
    public static let keepAlive: Int32 = 600

    /// A session, not yet connected (see ``run(_:)``).
    public init(settings: MQTTSettings, now: Date = Date(), logger: Logger = Logger(label: "LocationKeepAlive.owntracks")) {
        self.settings = settings
        self.started = now
        self.logger = logger
    }

    /// What came from the command topic: a command, or why a message was not one.
    public typealias Received = Result<OwnTracksCommand, OwnTracksError>

    /// Connects (reconnecting by itself) and hands each message of the command topic to
    /// `handle`, one at a time in arrival order, until the task is cancelled; then says goodbye:
    /// the status `offline` (retained), and a disconnection, so the broker publishes no will.
    ///
    /// - Throws: ``DeliveryError`` when the session cannot be set up (libmosquitto missing, a
    ///   bad password or key file).
    public func run(_ handle: @escaping @Sendable (Received) async -> Void) async throws(DeliveryError) {
        let encryption = try settings.keyFile.map { file throws(DeliveryError) in try OwnTracksEncryption(keyFile: file.path) }
        let password = try settings.passwordFile.map { file throws(DeliveryError) in try PasswordFile.read(file.path) }
        let (messages, arrive) = AsyncStream.makeStream(of: MosquittoClient.Message.self)
        let connected = Locked<@Sendable () -> Void>({})
        let callbacks = MosquittoClient.Callbacks(
            connected: { [logger, settings] code, reason in
                guard code == 0 else {
                    logger.info("the MQTT broker refused the device's session", metadata: ["broker": "\(settings.host):\(settings.port)", "reason": "\(reason)"])
                    return
                }
                connected.withLock { $0 }()
            },
            disconnected: { _, _ in },
            published: { _ in },
            received: { arrive.yield($0) }
        )
        let client: MosquittoClient
        let presence: OwnTracksPresence
        do {
            presence = try OwnTracksPresence(settings: settings, password: password, encryption: encryption, started: started, logger: logger)
            let will = try Self.text(OwnTracksMessage.LastWill(time: Int64(started.timeIntervalSince1970.rounded(.down))), encryption)
            client = try MosquittoClient(
                settings,
                clientID: settings.clientID + "-device",
                cleanSession: false,
                password: password,
                will: MosquittoClient.Will(topic: settings.topic, payload: will),
                largestMessage: OwnTracksCommand.largestPayload,
                callbacks: callbacks
            )
        } catch {
            throw .badDestination("mqtt://\(settings.host):\(settings.port)/\(settings.topic)", "\(error)")
        }
        connected.withLock { hello in
            hello = { [logger, settings] in
                if settings.takesCommands, let error = client.subscribe(to: settings.topic + "/cmd") {
                    logger.error("could not subscribe to the commands", metadata: ["topic": "\(settings.topic)/cmd", "error": "\(error)"])
                }
                logger.info("the device's session is connected", metadata: ["broker": "\(settings.host):\(settings.port)"])
            }
        }
        self.client.withLock { $0 = client }
        // A long keepalive: a frozen app sends no ping, and the broker drops it after 1.5 times
        // this (then the will says it is away, and commands wait in the session for its next
        // wake); until then a command reaches its socket and wakes it.
        presence.start()
        if let error = client.start(host: settings.host, port: settings.port, keepAlive: Self.keepAlive) {
            logger.info("the device's session is not connected yet", metadata: ["reason": "\(error)"])
        }
        let commandTopic = settings.topic + "/cmd"
        await withTaskCancellationHandler {
            // QoS 1 is at least once: after a reconnect the persistent session sends a command
            // again that was taken but not yet acknowledged, with its id. Taken once.
            var recent = RecentMessages()
            for await message in messages where message.topic == commandTopic {
                guard recent.isNew(message) else {
                    logger.info("a command the broker sent again after a reconnect is taken once", metadata: ["id": "\(message.id)"])
                    continue
                }
                await handle(Self.command(in: message, encryption: encryption))
            }
        } onCancel: {
            arrive.finish()
        }
        self.client.withLock { $0 = nil }
        connected.withLock { $0 = {} }  // it held the client
        await presence.goodbye()
        client.stop()
    }

    /// The command a message of the command topic holds, or why it holds none.
    private static func command(in message: MosquittoClient.Message, encryption: OwnTracksEncryption?) -> Received {
        guard !message.retained else {
            return .failure(.badCommand("a retained message is the broker's old copy, not a command: publish commands without -r"))
        }
        guard let payload = message.payload else {
            return .failure(.badCommand("\(message.size) bytes, more than the \(OwnTracksCommand.largestPayload) a command may have"))
        }
        return Result { () throws(OwnTracksError) in try OwnTracksCommand.parse(Data(payload), encryption: encryption) }
    }

    /// The session's socket while connected, if it takes commands: what a host watches to wake
    /// the app frozen when a command comes (see `HostClient.wakeOnData(from:)`).
    public var commandSocket: Int32? {
        guard settings.takesCommands, let socket = client.withLock({ $0?.socket }), socket >= 0 else { return nil }
        return socket
    }

    /// Publishes `message` (already JSON) on `TOPIC` + `subtopic` at QoS 1, encrypted with the
    /// key if there is one; queued by libmosquitto while the session is reconnecting.
    ///
    /// - Returns: `nil`, or why it could not be queued.
    @discardableResult
    public func publish(_ json: String, on subtopic: String) -> String? {
        guard let client = client.withLock({ $0 }) else { return "the device's session is not running" }
        let text: String
        do {
            let encryption = try settings.keyFile.map { file throws(DeliveryError) in try OwnTracksEncryption(keyFile: file.path) }
            text = try encryption.map { encryption throws(OwnTracksError) in try encryption.seal(json) } ?? json
        } catch {
            return "\(error)"
        }
        switch client.publish(topic: settings.topic + subtopic, payload: text) {
        case .success: return nil
        case .failure(let error): return "\(error)"
        }
    }

    /// The configuration `dump` publishes: the destination's settings, `waypoints` and the
    /// monitoring mode (`monitoring`, and move mode's displacement in metres and interval in
    /// seconds), without the password or the key.
    public func configuration(
        waypoints: [OwnTracksWaypoint], monitoring: Int? = nil, displacement: Double? = nil, interval: Int64? = nil
    ) -> String {
        let parts = settings.topic.split(separator: "/")
        return OwnTracksPayload.encode(
            OwnTracksMessage.Configuration(
                mode: 0,
                host: settings.host,
                port: settings.port,
                tls: settings.usesTLS,
                username: settings.username,
                auth: settings.passwordFile != nil,
                clientId: settings.clientID,
                deviceId: parts.last.map(String.init) ?? "",
                tid: settings.trackerID,
                pubTopicBase: settings.topic,
                cmd: settings.takesCommands,
                encryption: settings.keyFile != nil,
                monitoring: monitoring,
                locatorDisplacement: displacement,
                locatorInterval: interval,
                waypoints: waypoints.map(OwnTracksMessage.Waypoint.init)
            )
        )
    }

    /// `message` as JSON, sealed with `encryption` when there is one.
    static func text(_ message: some Encodable, _ encryption: OwnTracksEncryption?) throws(OwnTracksError) -> String {
        let json = OwnTracksPayload.encode(message)
        guard let encryption else { return json }
        return try encryption.seal(json)
    }
}

/// The last command messages taken (their broker ids and payloads), to take a message the
/// broker sends again only once. Ids are the broker's 16-bit counter for this session: a
/// hundred commands go by long before one comes round again.
struct RecentMessages {
    private var taken: [(id: Int32, payload: [UInt8]?)] = []

    /// Whether `message` was not taken among the last hundred; remembers it.
    mutating func isNew(_ message: MosquittoClient.Message) -> Bool {
        guard message.id != 0 else { return true }
        if taken.contains(where: { $0.id == message.id && $0.payload == message.payload }) { return false }
        taken.append((message.id, message.payload))
        if taken.count > 100 { taken.removeFirst() }
        return true
    }
}
