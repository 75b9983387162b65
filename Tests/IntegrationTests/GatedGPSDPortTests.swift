import Foundation
import IntegrationSupport
import Testing

/// The gated gpsd takes a port only when gpsd has it to itself: two helpers given one "free"
/// port could start two gpsds that each bind one loopback, and a client of one would read the
/// other's log (a main step on a fresh clone compared `garmin-geko201` with `bu353-glonass`).
@Suite(.timeLimit(.minutes(2)))
struct GatedGPSDPortTests {
    @Test func aPortHeldOnOneLoopbackIsRefusedAndTriedAgain() async throws {
        try Tools.requireGPSD()
        // Something else listens on [::1]:P; gpsd, asked for P, binds 127.0.0.1:P only.
        let script = """
            import socket, subprocess, sys
            held = socket.socket(socket.AF_INET6)
            held.bind(("::1", 0))
            held.listen()
            port = held.getsockname()[1]
            helper = subprocess.run(
                ["/usr/bin/python3", sys.argv[1], "--port", str(port), "--timeout", "60", sys.argv[2]],
                capture_output=True, text=True, timeout=90)
            print("PORT %d" % port)
            print("EXIT %d" % helper.returncode)
            sys.stdout.write(helper.stdout + helper.stderr)
            """
        let log = Tools.repository.appendingPathComponent("Mocks/Fixtures/nmea/bu353-glonass.log")
        let result = try await runCommand(
            "/usr/bin/python3", ["-c", script, Tools.gatedGPSFake.path, log.path], timeout: Tools.patience * 3
        )
        let port = try #require(result.lines.first { $0.hasPrefix("PORT ") }).dropFirst(5)
        #expect(result.lines.contains("EXIT 1"), "\(result.lines)")
        #expect(result.lines.contains { $0.hasPrefix("FAILED gpsd never had a port to itself") }, "\(result.lines)")
        let refusals = result.lines.filter {
            $0.contains("could not have port \(port) to itself") && $0.contains("can't bind to IPv6 port \(port)")
        }
        #expect(refusals.count == 3, "one refusal an attempt: \(result.lines)")
        #expect(!result.lines.contains { $0.hasPrefix("READY") })
    }
}
