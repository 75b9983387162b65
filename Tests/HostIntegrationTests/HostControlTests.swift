import Foundation
import Glibc
import LocationKeepAlive
import IntegrationSupport
import Testing

/// Bad input on the control socket: a clear error each, no app left frozen, nothing lost.
@Suite(.timeLimit(.minutes(2)), .serialized)
struct HostControlTests {
    @Test func refusalsSayWhatIsWrongAndLeaveTheAppAsItWas() async throws {
        let harness = try await HostHarness(freezer: .cgroup2, profile: HostScenarioTests.profile)
        let heartbeat = Heartbeat()
        defer { heartbeat.remove() }
        try await harness.launch("beat", ["sh", "-c", heartbeat.loop])
        try await heartbeat.waitForBeats(2)
        let client = try HostClient(socket: URL(fileURLWithPath: harness.socket))

        // An unknown app.
        let unknown = await #expect(throws: HostError.self) {
            try await client.send(HostRequest(.foreground, app: "nope"))
        }
        #expect(unknown?.message.contains("no app nope under this host (apps: beat)") == true)
        // Speaking for an app this process is not in.
        let stranger = await #expect(throws: HostError.self) { _ = try await client.hello(app: "beat") }
        #expect(stranger?.message.contains("is not in app beat's group") == true)
        // An app's report before hello.
        var audio = HostRequest(.audio)
        audio.active = true
        let early = await #expect(throws: HostError.self) { try await client.send(audio) }
        #expect(early?.message.contains("say hello") == true)
        // A command that does not start: nothing launched, no group left.
        let missing = await #expect(throws: HostError.self) {
            try await harness.launch("ghost", ["/nonexistent/ghost-app"])
        }
        #expect(missing?.message.contains("cannot start /nonexistent/ghost-app: no such executable file") == true)
        #expect(await (try? harness.status("ghost")) == nil)
        // Launching a running app again.
        let twice = await #expect(throws: HostError.self) { try await harness.launch("beat", ["true"]) }
        #expect(twice?.message.contains("app beat is running already") == true)
        // Bad launch input.
        let badID = await #expect(throws: HostError.self) { try await harness.launch("../x", ["true"]) }
        #expect(badID?.message.contains("app id of letters") == true)

        let status = try await harness.status("beat")
        #expect(status.state == "active" && !status.frozen)
        client.close()
        await harness.stop()
    }

    @Test func aLineThatIsNotTheProtocolGetsAnErrorAndTheConnectionCloses() async throws {
        let harness = try await HostHarness(freezer: .signal, profile: HostScenarioTests.profile)
        let reply = try await rawExchange(socket: harness.socket, send: "GET / HTTP/1.0\n")
        #expect(reply.contains(#""ok":false"#) && reply.contains("not a host request"))
        let huge = try await rawExchange(socket: harness.socket, send: String(repeating: "x", count: 70_000) + "\n")
        #expect(huge.contains("longer than 65536 bytes"))
        // The host goes on serving.
        #expect(try await HostClient(socket: URL(fileURLWithPath: harness.socket)).send(HostRequest(.status)).ok)
        await harness.stop()
    }

    @Test func anAppMayNotMoveAppsNorSpeakForAnother() async throws {
        let harness = try await HostHarness(freezer: .cgroup1, profile: HostScenarioTests.profile)
        let heartbeat = Heartbeat()
        defer { heartbeat.remove() }
        try await harness.launch("victim", ["sh", "-c", heartbeat.loop])
        let path = harness.directory.appendingPathComponent("answers").path
        let requests = [
            #"{"op": "hello", "app": "victim"}"#, #"{"op": "background", "app": "victim"}"#,
            #"{"op": "hello", "app": "$APP"}"#,
        ]
        try await harness.launch("rogue", rawProtocolApp(sending: requests, answersTo: path))
        let lines = try await answers(in: path, count: 3)
        #expect(lines[0].contains("is not in app victim's group"))
        #expect(lines[1].contains("the apps' socket serves hello and an app's reports: background goes to the host's control socket"))
        #expect(lines[2].contains(#""ok":true"#), "it may speak for itself")
        #expect(try await harness.status("victim").state == "active")
        #expect(harness.all.contains { if case .refused = $0.event { true } else { false } })
        await harness.stop()
    }

    @Test func aSecondHostOnTheSameSocketIsRefused() async throws {
        let harness = try await HostHarness(freezer: .signal, profile: HostScenarioTests.profile)
        var configuration = AppHost.Configuration(socket: URL(fileURLWithPath: harness.socket))
        configuration.freezer = .signal
        let error = #expect(throws: HostError.self) { _ = try AppHost(configuration: configuration) }
        #expect(error?.code == .socketInUse && error?.message.contains("another host answers on") == true)
        #expect(
            try await HostClient(socket: URL(fileURLWithPath: harness.socket)).send(HostRequest(.status)).ok,
            "the first host still serves"
        )
        await harness.stop()
    }

    @Test func noHostIsAClearError() throws {
        let error = #expect(throws: HostError.self) { _ = try HostClient(socket: URL(fileURLWithPath: "/nonexistent/host.sock")) }
        #expect(error?.code == .hostUnreachable && error?.message.contains("start one with `keepalive host`") == true)
    }

    /// Sends raw bytes and reads what comes back until the host closes the connection.
    private func rawExchange(socket path: String, send: String) async throws -> String {
        let result = try await runCommand(
            "/usr/bin/python3",
            [
                "-c",
                """
                import socket, sys
                s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(sys.argv[2].encode())
                data = b""
                while True:
                    chunk = s.recv(65536)
                    if not chunk: break
                    data += chunk
                print(data.decode())
                """,
                path, send,
            ],
            timeout: .seconds(20)
        )
        return result.lines.joined(separator: "\n")
    }
}
