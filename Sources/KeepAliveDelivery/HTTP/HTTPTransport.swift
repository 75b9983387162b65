import Dispatch
public import FoundationEssentials
public import Logging
import KeepAliveCore
public import KeepAliveJournal

/// Delivery over HTTP, one record a request, in order, through libcurl (one connection kept
/// alive): an OwnTracks Recorder's `/pub` (JSON, `X-Limit-U` and `X-Limit-D`) or Traccar's
/// OsmAnd protocol (query parameters). 2xx is delivery; 408, 429, 5xx and network errors are
/// retried; any other 4xx is a refusal of that record.
public final class HTTPTransport: DeliveryTransport {
    /// What the server speaks.
    public enum Format: Sendable, Hashable {
        /// An OwnTracks Recorder's `/pub`: OwnTracks JSON.
        case ownTracks
        /// Traccar's OsmAnd protocol: query parameters.
        case osmAnd
    }

    /// The server's URL and headers.
    public let settings: HTTPSettings
    /// What the server speaks.
    public let format: Format
    let timeout: Duration
    let logger: Logger
    private let queue = DispatchQueue(label: "LocationKeepAlive.http")
    private let session = Locked<CurlSession?>(nil)
    private let answers = Locked<(@Sendable (Data) -> Void)?>(nil)

    /// A transport to the server in `settings`, speaking `format`.
    public init(
        settings: HTTPSettings,
        format: Format,
        timeout: Duration = .seconds(10),
        logger: Logger = Logger(label: "LocationKeepAlive.http")
    ) {
        self.settings = settings
        self.format = format
        self.timeout = timeout
        self.logger = logger
    }

    /// Sends the records one a request, in order, and stops at the first that is not delivered.
    public func send(_ records: [JournalRecord]) async -> DeliveryResult {
        let password: String?
        let encryption: OwnTracksEncryption?
        do throws(DeliveryError) {
            (password, encryption) = try secrets()
        } catch {
            return DeliveryResult(acknowledged: 0, failure: .unavailable("\(error)"))
        }
        return await withCheckedContinuation { continuation in
            queue.async { [self] in
                continuation.resume(returning: sendNow(records, password: password, encryption: encryption))
            }
        }
    }

    /// OwnTracks: calls `handler` with each answer's body that is not empty (a Recorder may
    /// answer a POST with messages for the device, commands among them).
    public func onAnswer(_ handler: @escaping @Sendable (Data) -> Void) {
        answers.withLock { $0 = handler }
    }

    /// OwnTracks: POSTs one message of the device's own (an answer to a command: its waypoints,
    /// its configuration), encrypted with the key if there is one.
    ///
    /// - Returns: `nil` once the server took it (2xx), or why not.
    public func post(_ json: String) async -> String? {
        let password: String?
        let encryption: OwnTracksEncryption?
        do throws(DeliveryError) {
            (password, encryption) = try secrets()
        } catch {
            return "\(error)"
        }
        return await withCheckedContinuation { continuation in
            queue.async { [self] in
                guard let session = openSession() else { return continuation.resume(returning: "libcurl could not start a session") }
                let body: String
                do throws(OwnTracksError) {
                    body = try encryption.map { encryption throws(OwnTracksError) in try encryption.seal(json) } ?? json
                } catch {
                    return continuation.resume(returning: "\(error)")
                }
                let response = session.post(
                    url: settings.url, body: body, headers: ownTracksHeaders, username: settings.username, password: password,
                    caFile: settings.caFile?.path, timeout: timeout
                )
                let failure = response.error ?? ((200..<300).contains(response.status) ? nil : "HTTP \(response.status)")
                continuation.resume(returning: failure.map { "\(settings.url): \($0)" })
            }
        }
    }

    /// OwnTracks: the configuration `dump` posts: the endpoint, `waypoints` and the monitoring
    /// mode, without the password or the key.
    public func configuration(
        waypoints: [OwnTracksWaypoint], monitoring: Int? = nil, displacement: Double? = nil, interval: Int64? = nil
    ) -> String {
        OwnTracksPayload.encode(
            OwnTracksMessage.Configuration(
                mode: 3,
                url: settings.url,
                username: settings.username,
                auth: settings.passwordFile != nil,
                deviceId: settings.device ?? "",
                tid: settings.trackerID,
                cmd: true,
                encryption: settings.keyFile != nil,
                monitoring: monitoring,
                locatorDisplacement: displacement,
                locatorInterval: interval,
                waypoints: waypoints.map(OwnTracksMessage.Waypoint.init)
            )
        )
    }

    /// The password and the key, read from their files now (a changed one is taken at once).
    private func secrets() throws(DeliveryError) -> (password: String?, encryption: OwnTracksEncryption?) {
        let password = try settings.passwordFile.map { file throws(DeliveryError) in try PasswordFile.read(file.path) }
        let encryption = try settings.keyFile.map { file throws(DeliveryError) in try OwnTracksEncryption(keyFile: file.path) }
        return (password, encryption)
    }

    /// The headers of an OwnTracks POST.
    private var ownTracksHeaders: [String] {
        var headers = ["Content-Type: application/json"]
        if let user = settings.user { headers.append("X-Limit-U: \(user)") }
        if let device = settings.device { headers.append("X-Limit-D: \(device)") }
        return headers
    }

    /// The session, opened on first use (on the queue).
    private func openSession() -> CurlSession? {
        session.withLock { session -> CurlSession? in
            if session == nil { session = CurlSession() }
            return session
        }
    }

    /// Closes the connection.
    public func close() async {
        await withCheckedContinuation { continuation in
            queue.async { [session] in
                session.withLock { $0 = nil }
                continuation.resume()
            }
        }
    }

    /// On the queue: one request a record until one is not acknowledged.
    private func sendNow(_ records: [JournalRecord], password: String?, encryption: OwnTracksEncryption?) -> DeliveryResult {
        guard let session = openSession() else {
            let reason = CurlSession.loadError.map { "libcurl could not be loaded (\($0)): apt-get install libcurl4" }
            return DeliveryResult(acknowledged: 0, failure: .unavailable(reason ?? "libcurl could not start a session"))
        }
        for (index, record) in records.enumerated() {
            let request: (url: String, body: String, headers: [String])?
            do throws(OwnTracksError) {
                request = try self.request(for: record, encryptedWith: encryption)
            } catch {
                return DeliveryResult(acknowledged: index, failure: .unavailable("\(error)"))
            }
            guard let (url, body, headers) = request else { continue }  // nothing to send for it
            let response = session.post(
                url: url, body: body, headers: headers, username: settings.username, password: password,
                caFile: settings.caFile?.path, timeout: timeout
            )
            if let error = response.error {
                return DeliveryResult(acknowledged: index, failure: .unavailable("\(settings.url): \(error)"))
            }
            switch response.status {
            case 200..<300:
                if format == .ownTracks, !response.body.isEmpty, let answer = answers.withLock({ $0 }) { answer(Data(response.body)) }
                continue
            case 408, 429, 500...:
                return DeliveryResult(acknowledged: index, failure: .unavailable("\(settings.url) answered HTTP \(response.status)"))
            default:
                return DeliveryResult(acknowledged: index, failure: .refused("\(settings.url) answered HTTP \(response.status)"))
            }
        }
        return DeliveryResult(acknowledged: records.count)
    }

    /// The request for `record`, or `nil` for a record the server takes nothing for (OsmAnd
    /// has no events; OwnTracks has transitions for regions only).
    func request(
        for record: JournalRecord, encryptedWith encryption: OwnTracksEncryption? = nil
    ) throws(OwnTracksError) -> (url: String, body: String, headers: [String])? {
        switch format {
        case .ownTracks:
            guard let payload = OwnTracksPayload.of(record, trackerID: settings.trackerID) else { return nil }
            return (settings.url, try payload.text(encryptedWith: encryption), ownTracksHeaders)
        case .osmAnd:
            guard record.event == nil else { return nil }
            let separator = settings.url.contains("?") ? "&" : "?"
            let query = OsmAndQuery.query(record, deviceID: settings.device ?? "")
            return (settings.url + separator + query, "", ["Content-Type: application/x-www-form-urlencoded"])
        }
    }
}
