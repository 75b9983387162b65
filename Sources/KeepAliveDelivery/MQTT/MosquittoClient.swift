import CMosquitto
import FoundationEssentials
import Glibc
import KeepAliveCore

/// The libmosquitto client under the MQTT delivery: one `struct mosquitto` with its network
/// thread (`mosquitto_loop_start`), reconnecting by itself. The only file that touches
/// libmosquitto's pointers.
// Unchecked: `handle` is created in init and destroyed in deinit only; in between libmosquitto
// allows publish and disconnect from any thread while its own loop thread runs
// (mosquitto.h, "threaded interface"). The callbacks are immutable closures.
final class MosquittoClient: @unchecked Sendable {
    struct Callbacks: Sendable {
        var connected: @Sendable (_ code: Int32, _ reason: String) -> Void
        var disconnected: @Sendable (_ code: Int32, _ reason: String) -> Void
        var published: @Sendable (_ messageID: Int32) -> Void
        /// A message on a subscribed topic.
        var received: @Sendable (Message) -> Void = { _ in }
    }

    /// A message from a subscription.
    struct Message: Sendable {
        var topic: String
        /// `nil` when longer than the client takes (``size`` says how long): never copied then.
        var payload: [UInt8]?
        var size: Int
        /// A retained message: the broker's copy of an old one, sent at each subscription.
        var retained: Bool
        /// The broker's message id (QoS 1): a message the broker sends again after a reconnect
        /// comes with the same one.
        var id: Int32 = 0
    }

    /// What the broker publishes for this client when it goes away without disconnecting.
    struct Will: Sendable {
        var topic: String
        var payload: String
        var retained = false
    }

    private let handle: OpaquePointer
    private let api = libmosquitto.table
    private let callbacks: Callbacks
    private let loopStarted = Locked(false)
    /// The longest message taken from a subscription.
    private let largestMessage: Int

    /// - Parameters:
    ///   - cleanSession: `false` keeps the session on the broker across connections (QoS 1
    ///     messages in flight are sent again after a reconnection).
    init(
        clientID: String,
        cleanSession: Bool,
        username: String?,
        password: String?,
        caFile: String?,
        usesTLS: Bool,
        will: Will? = nil,
        largestMessage: Int = 64 * 1024,
        callbacks: Callbacks
    ) throws(MQTTError) {
        if let error = libmosquitto.error {
            throw .setup("libmosquitto could not be loaded (\(error)): apt-get install libmosquitto1")
        }
        self.callbacks = callbacks
        self.largestMessage = largestMessage
        guard let handle = cmosq_new(api, clientID, cleanSession, nil) else {
            throw .setup("mosquitto_new failed for client id \(clientID) (out of memory or an empty id)")
        }
        self.handle = handle
        cmosq_user_data_set(api, handle, Unmanaged.passUnretained(self).toOpaque())
        _ = cmosq_int_option(api, handle, MOSQ_OPT_PROTOCOL_VERSION, Int32(MQTT_PROTOCOL_V311))
        // A whole batch in flight at once (libmosquitto's default is 20, the rest queued; for
        // MQTT 3.1.1 this is the call, MOSQ_OPT_SEND_MAXIMUM being for MQTT 5).
        _ = cmosq_max_inflight_messages_set(api, handle, 1000)
        // Without it, Nagle's algorithm and the broker's delayed ACK cost 40 ms a batch.
        _ = cmosq_int_option(api, handle, MOSQ_OPT_TCP_NODELAY, 1)
        cmosq_reconnect_delay_set(api, handle, 1, 10, true)
        if let username {
            let code = cmosq_username_pw_set(api, handle, username, password)
            guard code == MOSQ_ERR_SUCCESS.rawValue else { throw .setup("username: \(Self.describe(code))") }
        }
        if usesTLS {
            let code = cmosq_tls_set(api, handle, caFile, caFile == nil ? "/etc/ssl/certs" : nil)
            guard code == MOSQ_ERR_SUCCESS.rawValue else {
                throw .setup("TLS with CA \(caFile ?? "/etc/ssl/certs"): \(Self.describe(code))")
            }
        }
        if let will {
            let code = will.payload.utf8CString.withUnsafeBufferPointer { bytes in
                cmosq_will_set(api, handle, will.topic, Int32(bytes.count - 1), bytes.baseAddress, 1, will.retained)
            }
            guard code == MOSQ_ERR_SUCCESS.rawValue else { throw .setup("the will on \(will.topic): \(Self.describe(code))") }
        }
        cmosq_message_callback_set(api, handle) { _, object, message in
            guard let object, let message else { return }
            let client = Unmanaged<MosquittoClient>.fromOpaque(object).takeUnretainedValue()
            let topic = message.pointee.topic.map { String(cString: $0) } ?? ""
            let size = Int(message.pointee.payloadlen)
            var payload: [UInt8]?
            if size <= client.largestMessage {
                payload = message.pointee.payload.map { Array(UnsafeRawBufferPointer(start: $0, count: size)) } ?? []
            }
            client.callbacks.received(
                Message(topic: topic, payload: payload, size: size, retained: message.pointee.retain, id: message.pointee.mid)
            )
        }
        cmosq_connect_callback_set(api, handle) { _, object, code in
            guard let object else { return }
            let client = Unmanaged<MosquittoClient>.fromOpaque(object).takeUnretainedValue()
            client.callbacks.connected(code, String(cString: cmosq_connack_string(client.api, code)))
        }
        cmosq_disconnect_callback_set(api, handle) { _, object, code in
            guard let object else { return }
            let client = Unmanaged<MosquittoClient>.fromOpaque(object).takeUnretainedValue()
            client.callbacks.disconnected(code, MosquittoClient.describe(code))
        }
        cmosq_publish_callback_set(api, handle) { _, object, messageID in
            guard let object else { return }
            Unmanaged<MosquittoClient>.fromOpaque(object).takeUnretainedValue().callbacks.published(messageID)
        }
    }

    /// A client of the broker in `settings`, with its credentials and TLS, as `clientID`.
    convenience init(
        _ settings: MQTTSettings,
        clientID: String,
        cleanSession: Bool,
        password: String?,
        will: Will? = nil,
        largestMessage: Int = 64 * 1024,
        callbacks: Callbacks
    ) throws(MQTTError) {
        try self.init(
            clientID: clientID,
            cleanSession: cleanSession,
            username: settings.username,
            password: password,
            caFile: settings.caFile?.path,
            usesTLS: settings.usesTLS,
            will: will,
            largestMessage: largestMessage,
            callbacks: callbacks
        )
    }

    deinit {
        stop()
        cmosq_destroy(api, handle)
    }

    /// Starts connecting in the background; libmosquitto's thread keeps reconnecting after failures.
    func start(host: String, port: Int, keepAlive: Int32 = 30) -> String? {
        let code = cmosq_connect_async(api, handle, host, Int32(port), keepAlive)
        let started = cmosq_loop_start(api, handle)
        loopStarted.withLock { $0 = started == MOSQ_ERR_SUCCESS.rawValue }
        guard started == MOSQ_ERR_SUCCESS.rawValue else { return "could not start libmosquitto's thread: \(Self.describe(started))" }
        return code == MOSQ_ERR_SUCCESS.rawValue ? nil : Self.describe(code)
    }

    /// Queues a QoS 1 message; its id comes back in `published` once the broker acknowledged it.
    func publish(topic: String, payload: String, retained: Bool = false) -> Result<Int32, MQTTError> {
        var messageID: Int32 = 0
        let code = payload.utf8CString.withUnsafeBufferPointer { bytes in
            cmosq_publish(api, handle, &messageID, topic, Int32(bytes.count - 1), bytes.baseAddress, 1, retained)
        }
        guard code == MOSQ_ERR_SUCCESS.rawValue else { return .failure(.publish(Self.describe(code))) }
        return .success(messageID)
    }

    /// Subscribes to `topic` at QoS 1 (with a persistent session, the broker keeps what comes
    /// while the client is away); `nil`, or why not.
    func subscribe(to topic: String) -> String? {
        let code = cmosq_subscribe(api, handle, topic, 1)
        return code == MOSQ_ERR_SUCCESS.rawValue ? nil : Self.describe(code)
    }

    /// The connection's socket, or -1 while not connected.
    var socket: Int32 { cmosq_socket(api, handle) }

    /// Disconnects and stops the network thread, waiting for it (which can take the kernel's
    /// two minutes of SYN retries if libmosquitto is reconnecting over a dead link).
    func stop() {
        let running = loopStarted.withLock { running in
            defer { running = false }
            return running
        }
        guard running else { return }
        cmosq_disconnect(api, handle)
        cmosq_loop_stop(api, handle, false)
    }

    static func describe(_ code: Int32) -> String {
        let api = libmosquitto.table
        if code == MOSQ_ERR_ERRNO.rawValue { return String(cString: strerror(errno)) }
        if code == MOSQ_ERR_KEEPALIVE.rawValue { return "no answer from the broker within the keepalive (is the network down?)" }
        return String(cString: cmosq_strerror(api, code))
    }
}

/// libmosquitto refused a setting or a message.
enum MQTTError: Error, Sendable, CustomStringConvertible {
    case setup(String)
    case publish(String)

    var description: String {
        switch self {
        case .setup(let reason): "MQTT setup: \(reason)"
        case .publish(let reason): "MQTT publish: \(reason)"
        }
    }
}

/// libmosquitto, loaded on first use.
private let libmosquitto = LoadedLibrary(empty: cmosq_table(), load: cmosq_load)
