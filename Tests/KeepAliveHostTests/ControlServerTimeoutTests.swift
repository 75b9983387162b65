import Dispatch
import FoundationEssentials
import Glibc
@testable import KeepAliveHost
@testable import KeepAliveHostProtocol
import TestWaiting
import Testing

/// The control plane's timeouts are enforced when they fall due, and a server none of whose
/// connections has a timeout running sets no timer: a host whose apps are frozen is not woken
/// for their idle connections.
@Suite struct ControlServerTimeoutTests {
    func server(forApps: Bool, lineTimeout: Duration = .seconds(10)) throws -> ControlServer {
        var limits = ControlLimits()
        limits.lineTimeout = lineTimeout
        // Not the subject here: a connection's idle timeout never falls due within a test.
        limits.idleTimeout = TestTime.patience * 2
        let path = "/tmp/keepalive-control-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
        let server = try ControlServer(path: path, mode: 0o600, forApps: forApps, limits: limits)
        server.start(
            handle: { request, connection in
                if request.op == .hello { connection.identifyAsApp() }
                return HostReply(id: request.id, ok: true)
            },
            closed: { _ in }
        )
        Task { await server.serve() }  // ends with the test's finish()
        return server
    }

    /// What the server sent until it closed the connection (read on a thread of its own).
    func readToEnd(_ socket: UnixSocket) async -> String {
        await onOwnThread {
            var lines: [String] = []
            socket.readLines(limit: 1 << 16) { line in
                lines.append(String(decoding: line, as: UTF8.self))
                return true
            }
            return lines.joined(separator: "\n")
        }
    }

    /// The server's first line (read on a thread of its own).
    func firstLine(_ socket: UnixSocket) async -> String {
        await onOwnThread {
            var reply: [UInt8] = []
            socket.readLines(limit: 1 << 16) { line in
                reply = line
                return false
            }
            return String(decoding: reply, as: UTF8.self)
        }
    }

    @Test func aLineThatDoesNotEndIsRefusedOnceItsTimeoutFallsDue() async throws {
        let server = try server(forApps: false, lineTimeout: .milliseconds(300))
        defer { server.finish() }
        let client = try UnixSocket.connect(to: server.path)
        let began = ContinuousClock.now
        #expect(client.write(Array(#"{"id": 1, "op": "st"#.utf8)))
        let said = await readToEnd(client)
        #expect(said.contains("a request line must end within"), "\(said)")
        #expect(ContinuousClock.now - began >= .milliseconds(300), "not before the line's timeout")
    }

    @Test func appsThatSaidHelloAndWaitSetNoTimer() async throws {
        let server = try server(forApps: true)
        defer { server.finish() }
        let client = try UnixSocket.connect(to: server.path)
        // Before its hello an app's connection may be closed for idling: a timer is set.
        try await waitUntil("a timer set for the new connection") { server.isSweepSet }
        #expect(client.write(Array(#"{"id": 1, "op": "hello", "app": "tracker"}"#.utf8) + [10]))
        #expect(await firstLine(client).contains(#""ok":true"#))
        // Said hello, answered, waiting (as a frozen app does): nothing falls due, no timer.
        try await waitUntil("no timer for a connection with no timeout running") { !server.isSweepSet }
    }
}
