import Dispatch
import FoundationEssentials
public import Logging
public import KeepAliveCore
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
            password = try settings.passwordFile.map { file throws(DeliveryError) in try PasswordFile.read(file.path) }
            encryption = try settings.keyFile.map { file throws(DeliveryError) in try OwnTracksEncryption(keyFile: file.path) }
        } catch {
            return DeliveryResult(acknowledged: 0, failure: .unavailable("\(error)"))
        }
        return await withCheckedContinuation { continuation in
            queue.async { [self] in
                continuation.resume(returning: sendNow(records, password: password, encryption: encryption))
            }
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
        let session = session.withLock { session -> CurlSession? in
            if session == nil { session = CurlSession() }
            return session
        }
        guard let session else {
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
            case 200..<300: continue
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
            var headers = ["Content-Type: application/json"]
            if let user = settings.user { headers.append("X-Limit-U: \(user)") }
            if let device = settings.device { headers.append("X-Limit-D: \(device)") }
            return (settings.url, try payload.text(encryptedWith: encryption), headers)
        case .osmAnd:
            guard record.event == nil else { return nil }
            let separator = settings.url.contains("?") ? "&" : "?"
            let query = OsmAndQuery.query(record, deviceID: settings.device ?? "")
            return (settings.url + separator + query, "", ["Content-Type: application/x-www-form-urlencoded"])
        }
    }
}
