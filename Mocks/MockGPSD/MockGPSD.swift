public import Foundation
import KeepAliveCore

/// A scriptable gpsd on a loopback port, for the faults a real gpsd and gpsfake cannot make:
/// malformed JSON, a close in the middle of a message, a stall, a flood, an unknown class, a
/// huge line.
///
/// Each connection gets `VERSION`; `?WATCH` is answered with `DEVICES` and `WATCH`, then the
/// connection's script runs; `?POLL;` is answered with the last TPV sent. Connection *n* runs
/// script *n*, the last script repeating. Each blocking loop has a thread of its own, so mocks
/// in parallel tests never wait for a shared pool.
///
/// ```swift
/// let gpsd = try MockGPSD(scripts: [[.tpv(latitude: 1, longitude: 2, time: now), .malformedJSON, .close]])
/// let source = GPSDSource(port: gpsd.port)
/// ```
public final class MockGPSD: Sendable {
    /// One thing the mock does on a connection.
    public enum Step: Sendable {
        /// Exactly these bytes (as UTF-8), no line end added.
        case raw(String)
        /// A well-formed TPV report with a fix.
        case tpv(latitude: Double, longitude: Double, time: Date, mode: Int = 3)
        /// A SKY report with this many satellites used.
        case sky(used: Int)
        /// Waits before the next step.
        case pause(Duration)
        /// Closes the connection.
        case close
        /// Says nothing more and keeps the connection open: a hung gpsd.
        case stall

        /// Not JSON at all, on a line of its own.
        public static let malformedJSON = Step.raw("{\"class\":\"TPV\",\"lat\":52.1,,,\"lon\r\n")
        /// A class gpsd may add one day: clients must skip it.
        public static let unknownClass = Step.raw("{\"class\":\"FUTURE\",\"value\":1}\r\n")
        /// The first half of a TPV, then the connection closes.
        public static let halfMessage = [
            Step.raw("{\"class\":\"TPV\",\"device\":\"/dev/mock\",\"mode\":3,\"la"), .close,
        ]

        /// A line of `bytes` bytes: a JSON string longer than any gpsd message.
        public static func hugeLine(bytes: Int) -> Step {
            .raw("{\"class\":\"TPV\",\"tag\":\"" + String(repeating: "x", count: max(0, bytes - 25)) + "\"}\r\n")
        }

        /// `count` TPVs as fast as the socket takes them, a millisecond apart from `start`.
        public static func flood(count: Int, from start: Date, latitude: Double = 52, longitude: Double = 4) -> [Step] {
            (0..<count).map { .tpv(latitude: latitude, longitude: longitude, time: start + Double($0) / 1000) }
        }
    }

    /// The port it listens on (127.0.0.1).
    public let port: Int
    private let listener: TCPSocket
    private let scripts: [[Step]]
    private let state = Locked(State())

    private struct State {
        var connections: [TCPSocket] = []
        var accepted = 0
        var lastTPV: String?
        var stopped = false
    }

    /// Starts listening; connections are served until ``stop()``.
    public init(scripts: [[Step]]) throws {
        (listener, port) = try TCPSocket.listen()
        self.scripts = scripts.isEmpty ? [[]] : scripts
        Thread.detachNewThread { [self] in acceptConnections() }
    }

    /// Connections accepted so far.
    public var connectionsAccepted: Int { state.withLock { $0.accepted } }

    /// Ends every connection and stops listening (each socket is closed by its own thread).
    public func stop() {
        let connections = state.withLock { state in
            state.stopped = true
            return state.connections
        }
        listener.shutdown()
        for connection in connections { connection.shutdown() }
    }

    deinit { stop() }

    private func acceptConnections() {
        while let connection = listener.accept() {
            let index: Int? = state.withLock { state in
                guard !state.stopped else { return nil }
                state.accepted += 1
                state.connections.append(connection)
                return state.accepted - 1
            }
            guard let index else {
                connection.close()
                break
            }
            let script = scripts[min(index, scripts.count - 1)]
            Thread.detachNewThread { [self] in serve(connection, script: script) }
        }
        listener.close()
    }

    private func serve(_ connection: TCPSocket, script: [Step]) {
        let writer = Writer(connection)
        let send = writer.send
        let watching = DispatchSemaphore(value: 0)
        let reader = DispatchGroup()  // empty once the request reader is gone; waits never consume it
        // Shut down first (wakes the reader), close only once the reader is gone: a descriptor
        // closed under a thread that still reads it would be read from after the number is reused.
        func finish() {
            connection.shutdown()
            reader.wait()
            connection.close()
        }
        guard
            send(
                #"{"class":"VERSION","release":"3.22-mock","rev":"mock","proto_major":3,"proto_minor":14}"# + "\r\n"
            )
        else {
            connection.close()
            return
        }
        // Requests: ?WATCH starts the script, ?POLL is answered at once.
        reader.enter()
        Thread.detachNewThread { [self] in
            var pending = ""
            var signalled = false
            while case let bytes = connection.receive(), !bytes.isEmpty {
                pending += String(decoding: bytes, as: UTF8.self)
                while let end = pending.firstIndex(of: ";") {
                    let request = String(pending[..<end])
                    pending = String(pending[pending.index(after: end)...])
                    if request.contains("?WATCH") {
                        _ = send(
                            #"{"class":"DEVICES","devices":[{"class":"DEVICE","path":"/dev/mock","driver":"NMEA0183","activated":"\#(Self.timestamp(Date()))","native":0}]}"#
                                + "\r\n"
                                + #"{"class":"WATCH","enable":true,"json":true,"nmea":false,"raw":0,"scaled":false,"timing":false,"split24":false,"pps":false}"#
                                + "\r\n"
                        )
                        if !signalled { watching.signal() }
                        signalled = true
                    } else if request.contains("?POLL") {
                        let last = state.withLock { $0.lastTPV }
                        _ = send(
                            #"{"class":"POLL","time":"\#(Self.timestamp(Date()))","active":1,"tpv":[\#(last ?? "")],"sky":[]}"#
                                + "\r\n"
                        )
                    }
                }
            }
            if !signalled { watching.signal() }
            reader.leave()
        }
        watching.wait()
        for step in script {
            switch step {
            case .raw(let text):
                guard send(text) else { return finish() }
            case .tpv(let latitude, let longitude, let time, let mode):
                let tpv =
                    #"{"class":"TPV","device":"/dev/mock","mode":\#(mode),"time":"\#(Self.timestamp(time))","#
                    + #""lat":\#(latitude),"lon":\#(longitude),"altHAE":50.0,"altMSL":4.0,"eph":5.0,"epv":8.0,"#
                    + #""speed":0.5,"track":90.0}"#
                state.withLock { $0.lastTPV = tpv }
                guard send(tpv + "\r\n") else { return finish() }
            case .sky(let used):
                let satellites = (0..<used).map { #"{"PRN":\#($0 + 1),"el":45.0,"az":90.0,"ss":40.0,"used":true}"# }
                guard
                    send(
                        #"{"class":"SKY","device":"/dev/mock","satellites":[\#(satellites.joined(separator: ","))]}"#
                            + "\r\n"
                    )
                else { return finish() }
            case .pause(let duration):
                Thread.sleep(
                    forTimeInterval: Double(duration.components.seconds) + Double(duration.components.attoseconds)
                        / 1e18
                )
            case .close:
                return finish()
            case .stall:
                break
            }
            if case .stall = step { break }
        }
        // Script done or stalled: keep the connection until the client or stop() closes it.
        while !state.withLock({ $0.stopped }), reader.wait(timeout: .now() + .milliseconds(50)) == .timedOut {}
        finish()
    }

    /// Whole messages from two threads (the script and the request reader) never interleave.
    private final class Writer: Sendable {
        private let connection: TCPSocket
        private let sent = Locked(0)  // messages sent; the lock keeps whole messages apart

        init(_ connection: TCPSocket) { self.connection = connection }

        @Sendable func send(_ text: String) -> Bool {
            sent.withLock { count in
                count += 1
                return connection.send(Array(text.utf8))
            }
        }
    }

    private static let timeStyle = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    private static func timestamp(_ date: Date) -> String { timeStyle.format(date) }
}
