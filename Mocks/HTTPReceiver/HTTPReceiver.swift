import Foundation
import KeepAliveCore

/// A scriptable HTTP server on 127.0.0.1 for delivery tests: it answers each request as the
/// script says (a status, slowly, or by dropping the connection) and keeps every request.
///
/// ```swift
/// let receiver = try HTTPReceiver { request, number in number == 3 ? .status(400) : .status(200) }
/// // deliver to "http://127.0.0.1:\(receiver.port)/pub"
/// ```
public final class HTTPReceiver: Sendable {
    /// One request as it arrived.
    public struct Request: Sendable, Hashable {
        /// `GET`, `POST`, ...
        public var method: String
        /// The path with its query string.
        public var target: String
        /// Header names in lower case.
        public var headers: [String: String]
        /// The body as text.
        public var body: String
        /// The status it was answered with (`nil`: the connection was dropped).
        public var answeredWith: Int?

        /// The query's parameters.
        public var query: [String: String] {
            guard let components = URLComponents(string: target) else { return [:] }
            var result: [String: String] = [:]
            for item in components.queryItems ?? [] { result[item.name] = item.value ?? "" }
            return result
        }
    }

    /// How one request is answered.
    public enum Answer: Sendable, Hashable {
        /// At once, with this status.
        case status(Int)
        /// Waits, then answers.
        case slow(Duration, Int)
        /// Closes the connection without an answer.
        case drop
        /// At once, with this status and this JSON body (an OwnTracks Recorder's answer may
        /// carry messages for the device, commands among them).
        case json(Int, String)
    }

    /// The port it listens on, on 127.0.0.1.
    public let port: Int
    private let listener: TCPSocket
    private let script: @Sendable (Request, _ number: Int) -> Answer
    private let log = Locked([Request]())
    /// Open connections, so ``stop()`` can wake their threads; `nil` once stopped.
    private let connections = Locked<[ObjectIdentifier: TCPSocket]?>([:])

    /// - Parameter script: the answer to the n-th request (from 1).
    public init(script: @escaping @Sendable (Request, _ number: Int) -> Answer = { _, _ in .status(200) }) throws {
        (listener, port) = try TCPSocket.listen()
        self.script = script
        Thread.detachNewThread { [self] in
            while let connection = listener.accept() {
                let kept = connections.withLock { open in
                    open?[ObjectIdentifier(connection)] = connection
                    return open != nil
                }
                guard kept else { break }
                Thread.detachNewThread { [self] in serve(connection) }
            }
            listener.close()  // here only: this thread is the one blocked in accept
        }
    }

    /// Every request so far, in order.
    public var requests: [Request] { log.withLock { $0 } }

    /// The requests answered with 2xx.
    public var accepted: [Request] { requests.filter { ($0.answeredWith ?? 0) / 100 == 2 } }

    /// Stops listening and ends every open connection; the threads close their sockets.
    public func stop() {
        let open = connections.withLock { open in
            defer { open = nil }
            return open ?? [:]
        }
        listener.shutdown()
        for connection in open.values { connection.shutdown() }
    }

    private func serve(_ connection: TCPSocket) {
        defer {
            connections.withLock { _ = $0?.removeValue(forKey: ObjectIdentifier(connection)) }
            connection.close()
        }
        var buffer: [UInt8] = []
        while true {
            guard var request = readRequest(connection, &buffer) else { return }
            let number = log.withLock { $0.count + 1 }
            let answer = script(request, number)
            var status: Int?
            var body = "{}"
            switch answer {
            case .status(let code): status = code
            case .json(let code, let json):
                status = code
                body = json
            case .slow(let delay, let code):
                Thread.sleep(forTimeInterval: Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18)
                status = code
            case .drop: status = nil
            }
            request.answeredWith = status
            log.withLock { $0.append(request) }
            guard let status else { return connection.shutdown() }
            let head = "HTTP/1.1 \(status) Scripted\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
            guard connection.send(Array((head + body).utf8)) else { return }
        }
    }

    /// Reads one request (headers and a Content-Length body); `nil` at the end of the stream.
    private func readRequest(_ connection: TCPSocket, _ buffer: inout [UInt8]) -> Request? {
        let separator: [UInt8] = [13, 10, 13, 10]
        while true {
            if let end = buffer.firstRange(of: separator) {
                let head = String(decoding: buffer[..<end.lowerBound], as: UTF8.self)
                let lines = head.components(separatedBy: "\r\n")
                let requestLine = lines.first?.split(separator: " ") ?? []
                var headers: [String: String] = [:]
                for line in lines.dropFirst() {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                }
                let length = Int(headers["content-length"] ?? "0") ?? 0
                while buffer.count < end.upperBound + length {
                    let more = connection.receive()
                    if more.isEmpty { return nil }
                    buffer += more
                }
                let body = String(decoding: buffer[end.upperBound..<(end.upperBound + length)], as: UTF8.self)
                buffer.removeFirst(end.upperBound + length)
                return Request(
                    method: requestLine.count > 0 ? String(requestLine[0]) : "",
                    target: requestLine.count > 1 ? String(requestLine[1]) : "",
                    headers: headers,
                    body: body,
                    answeredWith: nil
                )
            }
            let more = connection.receive()
            if more.isEmpty { return nil }
            buffer += more
        }
    }
}
