import Foundation
import LocationKeepAlive
import LocationKeepAliveMocks
import Subprocess
import IntegrationSupport
import TestWaiting
import Testing

/// `keepalive run --metrics`: swift-metrics counted by the service, served as Prometheus text on
/// loopback, read with curl as Prometheus would scrape it.
@Suite(.timeLimit(.minutes(3)))
struct MetricsEndpointTests {
    private func scrape(_ url: String) async throws -> CommandResult {
        try await runCommand("/usr/bin/curl", ["-s", "-w", "\n%{http_code}", url])
    }

    /// The value of one sample line (`name{labels} value`), if the text has it.
    private func sample(_ name: String, in lines: [String]) -> Double? {
        lines.first { $0.hasPrefix(name + " ") }.flatMap { Double($0.split(separator: " ").last ?? "") }
    }

    @Test func pollsFixesAndTheBackgroundAreCountedAndServedOnLoopback() async throws {
        let keepalive = try Tools.keepalive.path
        let authFile = FileManager.default.temporaryDirectory.appendingPathComponent("metrics-\(UUID().uuidString).json")
        _ = try await runCommand(keepalive, ["auth", "set", "always", "--app", "metered", "--auth-file", authFile.path])
        let port = try await Tools.freePort()
        let (_, status) = try await RunningCommand.run(
            keepalive,
            [
                "run", "--replay", NMEAFixture("ublox-8.log").url.path, "--loop", "--json", "--background",
                "--policy", "ios13", "--budget", "2s", "--interval", "1s", "--audio-device", "null", "--app", "metered",
                "--auth-file", authFile.path, "--metrics", String(port),
            ]
        ) { command in
            var announced: String?
            while announced == nil, let line = try await command.nextLine() {
                if line.contains("\"event\":\"metrics\"") { announced = line }
            }
            // Ended without saying where: its standard error is printed (RunningCommand).
            let said = try #require(announced, "keepalive run ended without announcing its metrics")
            #expect(said.contains("http://127.0.0.1:\(port)/metrics"), "loopback by default")
            // Polls every second once the 2 s budget ran out: wait for three.
            var lines: [String] = []
            _ = try await holds(within: .seconds(60)) {
                lines = try await scrape("http://127.0.0.1:\(port)/metrics").lines
                return (sample(#"keepalive_polls_total{result="ok"}"#, in: lines) ?? 0) >= 3
            }
            #expect(lines.last == "200")
            #expect((sample(#"keepalive_polls_total{result="ok"}"#, in: lines) ?? 0) >= 3, "\(lines)")
            #expect((sample("keepalive_fixes_total", in: lines) ?? 0) >= 3)
            #expect(sample("keepalive_background", in: lines) == 1)
            #expect(lines.contains("# TYPE keepalive_fixes_total counter"))
            let other = try await scrape("http://127.0.0.1:\(port)/other")
            #expect(other.lines.last == "404")
            try command.send(.terminate)
        }
        #expect(status == .exited(0))
    }

    @Test func aPortInUseIsAClearError() async throws {
        let keepalive = try Tools.keepalive.path
        let busy = try HTTPReceiver()  // a listener already on a loopback port
        defer { busy.stop() }
        let result = try await runCommand(
            keepalive,
            ["run", "--replay", NMEAFixture.mt3339.url.path, "--audio-device", "null", "--metrics", "127.0.0.1:\(busy.port)"]
        )
        #expect(result.exitCode == 1)
        #expect(result.error.contains("cannot serve metrics on 127.0.0.1:\(busy.port): address already in use"))
        let bad = try await runCommand(keepalive, ["run", "--metrics", "loopback"])
        #expect(bad.exitCode == 64)
        #expect(bad.error.contains("The value 'loopback' is invalid for '--metrics <[host:]port>'"))
    }
}
