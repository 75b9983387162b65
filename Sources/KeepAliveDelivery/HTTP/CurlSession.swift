import CCurl
import FoundationEssentials

/// One libcurl easy handle: blocking POSTs that reuse the connection. The only file that touches
/// libcurl's pointers; `HTTPTransport` calls it from one thread at a time.
// Unchecked: the handle is used by one request at a time (`HTTPTransport` runs them on its own
// serial queue, and the deliverer has one batch in flight), created in init, freed in deinit.
final class CurlSession: @unchecked Sendable {
    struct Response: Sendable {
        var status: Int
        var error: String?
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

    /// POSTs `body` to `url` and waits for the answer (its body is read and dropped).
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
        _ = ccurl_set_write_function(api, handle) { _, size, count, _ in size * count }
        if let username { _ = ccurl_set_string(api, handle, CURLOPT_USERNAME, username) }
        if let password { _ = ccurl_set_string(api, handle, CURLOPT_PASSWORD, password) }
        if let caFile { _ = ccurl_set_string(api, handle, CURLOPT_CAINFO, caFile) }
        var list: UnsafeMutablePointer<curl_slist>?
        for header in headers { list = ccurl_slist_append(api, list, header) }
        defer { ccurl_slist_free_all(api, list) }
        _ = ccurl_set_pointer(api, handle, CURLOPT_HTTPHEADER, list.map(UnsafeMutableRawPointer.init))
        let code = ccurl_easy_perform(api, handle)
        guard code == CURLE_OK else { return Response(status: 0, error: String(cString: ccurl_easy_strerror(api, code))) }
        var status = 0
        _ = ccurl_response_code(api, handle, &status)
        return Response(status: status, error: nil)
    }
}

/// libcurl, loaded on first use.
private let libcurl = LoadedLibrary(empty: ccurl_table(), load: ccurl_load)
