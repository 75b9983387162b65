import CCurl
import FoundationEssentials
import KeepAliveCore

/// One libcurl easy handle: blocking POSTs that reuse the connection. The only file that touches
/// libcurl's pointers; `HTTPTransport` calls it from one thread at a time.
// Unchecked: the handle is used by one request at a time (`HTTPTransport` runs them on its own
// serial queue, and the deliverer has one batch in flight), created in init, freed in deinit.
final class CurlSession: @unchecked Sendable {
    struct Response: Sendable {
        var status: Int
        var error: String?
        /// The answer's body, at most ``largestBody`` bytes (the rest is read and dropped).
        var body: [UInt8] = []
    }

    /// The most of an answer's body kept.
    static let largestBody = 256 * 1024

    /// Where libcurl writes the answer's body.
    private final class Body {
        var bytes: [UInt8] = []
    }

    private let handle: UnsafeMutableRawPointer

    /// Why libcurl could not be loaded, or `nil`.
    static var loadError: String? { libcurl.error }

    private var api: UnsafePointer<ccurl_table> { libcurl.table }

    init?() {
        guard libcurl.error == nil, let handle = ccurl_easy_init(libcurl.table) else { return nil }
        self.handle = handle
    }

    deinit { ccurl_easy_cleanup(api, handle) }

    /// POSTs `body` to `url` and waits for the answer (its body kept up to ``largestBody``).
    func post(
        url: String,
        body: String,
        headers: [String],
        username: String?,
        password: String?,
        caFile: String?,
        timeout: Duration
    ) -> Response {
        ccurl_easy_reset(api, handle)
        _ = ccurl_set_string(api, handle, CURLOPT_URL, url)
        _ = ccurl_set_long(api, handle, CURLOPT_NOSIGNAL, 1)
        _ = ccurl_set_long(api, handle, CURLOPT_POST, 1)
        _ = ccurl_set_long(api, handle, CURLOPT_POSTFIELDSIZE, body.utf8.count)
        _ = ccurl_set_string(api, handle, CURLOPT_COPYPOSTFIELDS, body)
        _ = ccurl_set_long(api, handle, CURLOPT_TIMEOUT_MS, Int(timeout.components.seconds * 1000))
        _ = ccurl_set_long(api, handle, CURLOPT_CONNECTTIMEOUT_MS, 5000)
        _ = ccurl_set_string(api, handle, CURLOPT_USERAGENT, "keepalive")
        let answer = Body()
        _ = ccurl_set_write_function(api, handle) { data, size, count, object in
            guard let data, let object else { return size * count }
            let answer = Unmanaged<Body>.fromOpaque(object).takeUnretainedValue()
            let room = max(0, CurlSession.largestBody - answer.bytes.count)
            answer.bytes += UnsafeRawBufferPointer(start: data, count: min(room, size * count))
            return size * count
        }
        _ = ccurl_set_pointer(api, handle, CURLOPT_WRITEDATA, Unmanaged.passUnretained(answer).toOpaque())
        if let username { _ = ccurl_set_string(api, handle, CURLOPT_USERNAME, username) }
        if let password { _ = ccurl_set_string(api, handle, CURLOPT_PASSWORD, password) }
        if let caFile { _ = ccurl_set_string(api, handle, CURLOPT_CAINFO, caFile) }
        var list: UnsafeMutablePointer<curl_slist>?
        for header in headers { list = ccurl_slist_append(api, list, header) }
        defer { ccurl_slist_free_all(api, list) }
        _ = ccurl_set_pointer(api, handle, CURLOPT_HTTPHEADER, list.map(UnsafeMutableRawPointer.init))
        let code = withExtendedLifetime(answer) { ccurl_easy_perform(api, handle) }
        guard code == CURLE_OK else { return Response(status: 0, error: String(cString: ccurl_easy_strerror(api, code))) }
        var status = 0
        _ = ccurl_response_code(api, handle, &status)
        return Response(status: status, error: nil, body: answer.bytes)
    }
}

/// libcurl, loaded on first use.
private let libcurl = LoadedLibrary(empty: ccurl_table(), load: ccurl_load)
