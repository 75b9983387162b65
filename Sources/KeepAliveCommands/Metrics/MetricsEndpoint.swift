import CSockets
import Dispatch
import FoundationEssentials
import Glibc
import Metrics
import Prometheus

/// `--metrics [HOST:]PORT`: the service's swift-metrics as Prometheus text on
/// `http://HOST:PORT/metrics`, bound to loopback unless a host is given. One request at a time
/// on a thread of its own: a scrape every few seconds is all it is for.
final class MetricsEndpoint: Sendable {
    let host: String
    let port: Int
    private let listener: Int32
    private let registry: PrometheusCollectorRegistry

    /// Bootstraps swift-metrics with a Prometheus registry (once per process) and listens.
    init(host: String, port: Int) throws {
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        let descriptor = csock_listen(host, Int32(port))
        guard descriptor >= 0 else {
            let reason = String(cString: strerror(-descriptor)).lowercased()
            throw MetricsEndpointError(
                message: "cannot serve metrics on \(host):\(port): \(reason); choose another port with --metrics"
            )
        }
        self.host = host
        self.port = Int(csock_local_port(descriptor))
        self.listener = descriptor
        self.registry = registry
        // A blocking accept loop on a queue of its own (a dispatch thread), off the cooperative pool.
        DispatchQueue(label: "keepalive.metrics").async { [self] in serve() }
    }

    var url: String { "http://\(host.contains(":") ? "[\(host)]" : host):\(port)/metrics" }

    /// Stops accepting (the thread ends with its next `accept`).
    func stop() {
        csock_shutdown(listener)
    }

    private func serve() {
        defer { csock_close(listener) }
        while true {
            let client = csock_accept(listener)
            guard client >= 0 else { return }
            answer(client)
            csock_close(client)
        }
    }

    private func answer(_ client: Int32) {
        var request: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        // The request line and headers, at most 16 KB; a body, if any, is not read.
        while request.count < 16_384, !request.ends(with: Array("\r\n\r\n".utf8)) {
            let count = csock_read(client, &chunk, UInt(chunk.count))
            guard count > 0 else { break }
            request += chunk[0..<count]
        }
        let line = request.split(separator: UInt8(ascii: "\r"), maxSplits: 1).first.map { String(decoding: $0, as: UTF8.self) } ?? ""
        let parts = line.split(separator: " ")
        let (status, type, body): (String, String, [UInt8])
        if parts.count >= 2, parts[0] == "GET", parts[1] == "/metrics" || parts[1].hasPrefix("/metrics?") {
            var text: [UInt8] = []
            registry.emit(into: &text)
            (status, type, body) = ("200 OK", "text/plain; version=0.0.4; charset=utf-8", text)
        } else {
            (status, type, body) = ("404 Not Found", "text/plain; charset=utf-8", Array("try GET /metrics\n".utf8))
        }
        let head = "HTTP/1.1 \(status)\r\nContent-Type: \(type)\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        _ = csock_write_all(client, Array(head.utf8) + body, UInt(head.utf8.count + body.count))
    }
}

struct MetricsEndpointError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

extension Array where Element == UInt8 {
    fileprivate func ends(with suffix: [UInt8]) -> Bool { count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix }
}
