public import FoundationEssentials

/// A tracking server fixes are delivered to, by name (its queue in the journal is the name's:
/// changing the settings keeps it).
///
/// Written as a URL:
/// - `mqtt://[user@]host[:1883]/owntracks/USER/DEVICE` (`mqtts://`, port 8883, for TLS):
///   OwnTracks JSON over MQTT, QoS 1;
/// - `owntracks+http://[user@]host:8083/pub?user=USER&device=DEVICE` (or `+https`): an
///   OwnTracks Recorder's HTTP endpoint;
/// - `traccar+http://host:5055/?id=DEVICE` (or `+https`): Traccar's OsmAnd protocol.
///
/// Query options: `password-file=PATH` (a file of mode 0600 holding the password; never the
/// password itself), `ca=PATH` (the CA certificate for TLS), `tid=XX` (OwnTracks tracker id),
/// `client-id=ID` (MQTT), `key-file=PATH` (OwnTracks: a file of mode 0600 holding the shared key
/// every payload is encrypted with), `cmd=false` (OwnTracks over MQTT: take no remote commands).
public struct Destination: Sendable, Hashable {
    /// Letters, digits, `-` and `_`: the queue's name in the journal.
    public var name: String
    /// The server and its protocol.
    public var endpoint: Endpoint

    /// A server and the protocol it speaks.
    public enum Endpoint: Sendable, Hashable {
        /// OwnTracks JSON over MQTT, QoS 1, through libmosquitto.
        case ownTracksMQTT(MQTTSettings)
        /// OwnTracks JSON posted to a Recorder's `/pub`, through libcurl.
        case ownTracksHTTP(HTTPSettings)
        /// Traccar's OsmAnd protocol, one fix a request, through libcurl.
        case traccar(HTTPSettings)
    }

    /// The query options a destination's URL may have (see the type's documentation): the
    /// only ones taken.
    public static let optionNames = ["password-file", "ca", "tid", "client-id", "key-file", "cmd", "user", "device", "id"]

    /// A destination from its parts (``init(name:url:)`` parses the URL form).
    public init(name: String, endpoint: Endpoint) {
        self.name = name
        self.endpoint = endpoint
    }

    /// Parses `url` (see the type's documentation).
    public init(name: String, url text: String) throws(DeliveryError) {
        let shown = Self.redacted(text)  // what errors show: never the password
        guard shown == text else {  // refused before anything else is read of it, so no reason quotes a piece
            throw .badDestination(
                shown,
                "a password in the URL would show in process lists and logs: put it in a file of mode 0600 and give password-file=PATH"
            )
        }
        guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
            throw .badDestination(shown, "its name \"\(name)\" must be letters, digits, - and _")
        }
        guard let url = URLComponents(string: text), let scheme = url.scheme?.lowercased(),
            let host = url.host, !host.isEmpty
        else { throw .badDestination(shown, "not a URL with a host (for example mqtt://localhost/owntracks/me/phone)") }
        var options: [String: String] = [:]
        for item in url.queryItems ?? [] { options[item.name] = item.value ?? "" }
        if let unknown = options.keys.sorted().first(where: { !Self.optionNames.contains($0) }) {
            throw .badDestination(shown, "unknown option \(unknown) (known: \(Self.optionNames.joined(separator: ", ")))")
        }
        self.name = name
        var takesCommands = true
        switch options["cmd"]?.lowercased() {
        case nil, "true", "1", "yes": break
        case "false", "0", "no": takesCommands = false
        case let other?: throw .badDestination(shown, "cmd takes true or false, not \"\(other)\"")
        }
        if options["cmd"] != nil, scheme != "mqtt", scheme != "mqtts" {
            throw .badDestination(shown, "cmd is for OwnTracks over MQTT, where the device subscribes to its commands")
        }
        endpoint = try scheme.hasPrefix("mqtt")
            ? Self.mqttEndpoint(url, scheme: scheme, host: host, options: options, takesCommands: takesCommands, shown: shown)
            : Self.httpEndpoint(url, scheme: scheme, host: host, options: options, text: text, shown: shown)
        settings = text
    }

    private static func unknownScheme(_ scheme: String, _ shown: String) -> DeliveryError {
        .badDestination(shown, "unknown scheme \(scheme): use mqtt, mqtts, owntracks+http(s) or traccar+http(s)")
    }

    /// `mqtt://` and `mqtts://`: OwnTracks over MQTT, the topic /owntracks/USER/DEVICE.
    private static func mqttEndpoint(
        _ url: URLComponents,
        scheme: String,
        host: String,
        options: [String: String],
        takesCommands: Bool,
        shown: String
    ) throws(DeliveryError) -> Endpoint {
        guard scheme == "mqtt" || scheme == "mqtts" else {
            throw unknownScheme(scheme, shown)
        }
        let parts = url.path.split(separator: "/").map(String.init)
        guard parts.count == 3, parts[0] == "owntracks" else {
            throw .badDestination(shown, "the path must be the OwnTracks topic /owntracks/USER/DEVICE")
        }
        return .ownTracksMQTT(
            MQTTSettings(
                host: host,
                port: url.port ?? (scheme == "mqtts" ? 8883 : 1883),
                topic: parts.joined(separator: "/"),
                clientID: options["client-id"] ?? "keepalive-\(parts[1])-\(parts[2])",
                username: url.user,
                passwordFile: options["password-file"].map { URL(fileURLWithPath: $0) },
                caFile: options["ca"].map { URL(fileURLWithPath: $0) },
                usesTLS: scheme == "mqtts",
                trackerID: options["tid"] ?? String(parts[2].suffix(2)),
                keyFile: options["key-file"].map { URL(fileURLWithPath: $0) },
                takesCommands: takesCommands
            )
        )
    }

    /// `owntracks+http(s)://`, `traccar+http(s)://` (and `osmand+`): a Recorder or Traccar over HTTP.
    private static func httpEndpoint(
        _ url: URLComponents,
        scheme: String,
        host: String,
        options: [String: String],
        text: String,
        shown: String
    ) throws(DeliveryError) -> Endpoint {
        let kind = scheme.split(separator: "+")
        guard kind.count == 2, ["owntracks", "traccar", "osmand"].contains(kind[0]), ["http", "https"].contains(kind[1]) else {
            throw unknownScheme(scheme, shown)
        }
        var target = URLComponents()
        target.scheme = String(kind[1])
        target.host = host
        target.port = url.port
        target.path = url.path.isEmpty ? "/" : url.path
        let isTraccar = kind[0] != "owntracks"
        if isTraccar, options["id"]?.isEmpty ?? true {
            throw .badDestination(shown, "Traccar needs the device's identifier: ?id=DEVICE")
        }
        if !isTraccar, options["user"]?.isEmpty ?? true || options["device"]?.isEmpty ?? true {
            throw .badDestination(shown, "an OwnTracks Recorder needs ?user=USER&device=DEVICE")
        }
        if isTraccar, options["key-file"] != nil {
            throw .badDestination(shown, "key-file is for OwnTracks: Traccar's OsmAnd protocol is not encrypted")
        }
        let settings = HTTPSettings(
            url: target.string ?? text,
            username: url.user,
            passwordFile: options["password-file"].map { URL(fileURLWithPath: $0) },
            caFile: options["ca"].map { URL(fileURLWithPath: $0) },
            user: options["user"],
            device: isTraccar ? options["id"] : options["device"],
            trackerID: options["tid"] ?? options["device"].map { String($0.suffix(2)) },
            keyFile: options["key-file"].map { URL(fileURLWithPath: $0) }
        )
        return isTraccar ? .traccar(settings) : .ownTracksHTTP(settings)
    }

    /// `text` with any password it holds replaced by `***`: the user-information's after its
    /// colon (`mqtt://u:***@host/...`) and the values of query options named like secrets
    /// (`password`, `pass`, `secret`, `token`, `key`). Works on text that is not a valid URL too.
    public static func redacted(_ text: String) -> String {
        var result = text
        let characters = Array(result)
        if let slashes = (0..<max(0, characters.count - 2)).first(where: { characters[$0..<$0 + 3] == [":", "/", "/"] }) {
            // Up to the last "@": a password may hold "/", "?" or "@" itself; redacting too much
            // (an "@" in a query option) is safe, too little is not.
            let authorityStart = result.index(result.startIndex, offsetBy: slashes + 3)
            if let at = result[authorityStart...].lastIndex(of: "@"),
                let colon = result[authorityStart..<at].firstIndex(of: ":")
            {
                result.replaceSubrange(result.index(after: colon)..<at, with: "***")
            }
        }
        guard let query = result.firstIndex(of: "?") else { return result }
        let secretNames = ["password", "pass", "passwd", "secret", "token", "key"]
        let items = result[result.index(after: query)...].split(separator: "&", omittingEmptySubsequences: false).map { item in
            guard let equals = item.firstIndex(of: "="),
                secretNames.contains(item[..<equals].lowercased())
            else { return String(item) }
            return item[...equals] + "***"
        }
        return result[...query] + items.joined(separator: "&")
    }

    /// Reads the password and key files now (if there are any), so a bad one is reported at
    /// start, and checks that libsodium loads when payloads are encrypted.
    public func checkCredentials() throws(DeliveryError) {
        let (file, keyFile): (URL?, URL?) =
            switch endpoint {
            case .ownTracksMQTT(let settings): (settings.passwordFile, settings.keyFile)
            case .ownTracksHTTP(let settings), .traccar(let settings): (settings.passwordFile, settings.keyFile)
            }
        if let file { _ = try PasswordFile.read(file.path) }
        if let keyFile {
            _ = try OwnTracksEncryption(keyFile: keyFile.path)
            do {
                try OwnTracksEncryption.checkLibrary()
            } catch {
                throw .badDestination(settings, "\(error)")
            }
        }
    }

    /// The settings as given (kept in the journal; no password is ever in them).
    public private(set) var settings = ""
}

/// An MQTT broker and topic for OwnTracks.
public struct MQTTSettings: Sendable, Hashable {
    /// The broker's host name or address.
    public var host: String
    /// 1883, or 8883 with TLS, unless given.
    public var port: Int
    /// `owntracks/USER/DEVICE`.
    public var topic: String
    /// Stable across restarts, so the broker keeps the session (`keepalive upload` adds `-upload`).
    public var clientID: String
    /// The broker's user, if it asks for one.
    public var username: String?
    /// A file of mode 0600 holding the password.
    public var passwordFile: URL?
    /// The CA certificate that signed the broker's.
    public var caFile: URL?
    /// `mqtts://`: TLS.
    public var usesTLS: Bool
    /// OwnTracks' two-character tracker id (`tid`).
    public var trackerID: String?
    /// A file of mode 0600 holding the key every payload is encrypted with (`_type: encrypted`).
    public var keyFile: URL?
    /// Whether the device takes remote commands from `TOPIC/cmd` (`cmd=false` turns them off).
    public var takesCommands: Bool

    /// Settings from their parts.
    public init(
        host: String, port: Int = 1883, topic: String, clientID: String, username: String? = nil,
        passwordFile: URL? = nil, caFile: URL? = nil, usesTLS: Bool = false, trackerID: String? = nil, keyFile: URL? = nil,
        takesCommands: Bool = true
    ) {
        self.keyFile = keyFile
        self.takesCommands = takesCommands
        self.host = host
        self.port = port
        self.topic = topic
        self.clientID = clientID
        self.username = username
        self.passwordFile = passwordFile
        self.caFile = caFile
        self.usesTLS = usesTLS
        self.trackerID = trackerID
    }
}

/// An HTTP endpoint: an OwnTracks Recorder's `/pub` or a Traccar server.
public struct HTTPSettings: Sendable, Hashable {
    /// The endpoint, `http://` or `https://`, without the options.
    public var url: String
    /// The user for HTTP basic authentication, if the server asks for one.
    public var username: String?
    /// A file of mode 0600 holding the password.
    public var passwordFile: URL?
    /// The CA certificate that signed the server's.
    public var caFile: URL?
    /// OwnTracks: `X-Limit-U`.
    public var user: String?
    /// OwnTracks: `X-Limit-D`; Traccar: the device identifier.
    public var device: String?
    /// OwnTracks' two-character tracker id (`tid`).
    public var trackerID: String?
    /// OwnTracks: a file of mode 0600 holding the key every payload is encrypted with.
    public var keyFile: URL?

    /// Settings from their parts.
    public init(
        url: String, username: String? = nil, passwordFile: URL? = nil, caFile: URL? = nil,
        user: String? = nil, device: String? = nil, trackerID: String? = nil, keyFile: URL? = nil
    ) {
        self.keyFile = keyFile
        self.url = url
        self.username = username
        self.passwordFile = passwordFile
        self.caFile = caFile
        self.user = user
        self.device = device
        self.trackerID = trackerID
    }
}
