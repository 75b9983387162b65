public import FoundationEssentials
import Glibc

/// The host's control protocol: one JSON object a line, over a Unix stream socket.
///
/// A client sends ``HostRequest``s; each gets one ``HostReply`` with the same `id`. An app's
/// connection (after `hello`) also receives ``HostNotice``s at any time: a line with a
/// `notice` key is a notice, one with `ok` a reply. Lines are at most ``maximumLineLength``
/// bytes; a longer line, or one that is not a request, gets an error reply and closes the
/// connection. Dates are seconds since 1970 (UTC).
public enum HostProtocol {
    /// The longest line either side accepts, in bytes.
    public static let maximumLineLength = 65_536
    /// The most sockets an app may name in `wake-on-data`.
    public static let maximumWakeSockets = 4

    /// Where a host listens unless told otherwise: `$XDG_RUNTIME_DIR/keepalive-host.sock`, or
    /// `/run/keepalive-host.sock` for root.
    public static var defaultSocket: URL {
        if getuid() != 0, let runtime = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            return URL(fileURLWithPath: "\(runtime)/keepalive-host.sock")
        }
        return URL(fileURLWithPath: getuid() == 0 ? "/run/keepalive-host.sock" : "/tmp/keepalive-host-\(getuid()).sock")
    }

    /// Decodes one request line.
    ///
    /// - Throws: ``HostError/Code/badRequest`` saying what is wrong.
    public static func decodeRequest(_ line: some Collection<UInt8>) throws(HostError) -> HostRequest {
        guard line.count <= maximumLineLength else {
            throw HostError(.badRequest, "a request line is longer than \(maximumLineLength) bytes")
        }
        do {
            return try decoder().decode(HostRequest.self, from: Data(line))
        } catch {
            let text = String(decoding: line.prefix(80), as: UTF8.self)
            let why = (error as? DecodingError).map { " (\(Self.describe($0)))" } ?? ""
            throw HostError(.badRequest, "not a host request (one JSON object a line, with an op)\(why): \(text)")
        }
    }

    /// One value as a line, newline included.
    public static func encode(_ value: some Encodable) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .secondsSince1970
        var bytes = Array((try? encoder.encode(value)) ?? Data("{}".utf8))
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    /// What a decoding error says is wrong, with where (`conditions.home.radius`).
    private static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.map(\.stringValue).joined(separator: ".")
        }
        switch error {
        case .dataCorrupted(let context): return "\(path(context)): \(context.debugDescription)"
        case .keyNotFound(let key, let context):
            return "\(path(context).isEmpty ? "the request" : path(context)) needs \(key.stringValue)"
        case .typeMismatch(let type, let context): return "\(path(context)) must be \(type)"
        case .valueNotFound(let type, let context): return "\(path(context)) must be \(type), not null"
        @unknown default: return "\(error)"
        }
    }

    /// A decoder for the protocol's lines (dates in seconds since 1970).
    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return decoder
    }
}
