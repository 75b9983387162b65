import Foundation
import Glibc
import LocationKeepAlive
import Subprocess
import SystemPackage
import IntegrationSupport
import TestWaiting
import Testing

/// The host going away never leaves an app frozen: `keepalive host` (the real daemon, with
/// its watchdog) killed with SIGKILL while an app is frozen, then started again.
@Suite(.timeLimit(.minutes(3)), .serialized)
struct HostCrashTests {
    @Test(arguments: [FreezerKind.cgroup2, .cgroup1, .signal])
    func aKilledHostsWatchdogThawsItsAppsAndTheNextHostTakesThemBack(freezer: FreezerKind) async throws {
        let keepalive = try Tools.keepalive.path
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "crash-\(UUID().uuidString.prefix(8))"
        )
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let socket = directory.appendingPathComponent("host.sock").path
        let name = "keepalive.test-crash-\(UUID().uuidString.prefix(8))"
        let serve = [
            "host", "--socket", socket, "--freezer", freezer.rawValue, "--name", name, "--json", "--signal-other-users",
            "--monitors", directory.appendingPathComponent("monitors").path,
        ]
        let heartbeat = Heartbeat()
        defer { heartbeat.remove() }

        let first = try Self.startHost(keepalive, serve)
        try await waitUntil(timeout: .seconds(10)) { FileManager.default.fileExists(atPath: socket) }
        _ = try await runCommand(
            keepalive,
            ["host", "launch", "--socket", socket, "--app", "beat", "--user", "nobody", "--", "sh", "-c", heartbeat.loop]
        )
        try await heartbeat.waitForBeats(2)
        _ = try await runCommand(keepalive, ["host", "background", "--socket", socket, "--app", "beat"])
        try await Task.sleep(for: .milliseconds(300))
        let frozenCount = heartbeat.count
        try await Task.sleep(for: .milliseconds(500))
        #expect(heartbeat.count <= frozenCount + 1, "frozen before the crash")

        kill(first, SIGKILL)
        _ = await processExit(of: first, within: .seconds(10))
        let killedAt = ContinuousClock.now
        try await heartbeat.waitForBeats(frozenCount + 3, timeout: .seconds(5))
        print(
            "host crash, \(freezer): the watchdog thawed the app; heartbeat back \(killedAt.duration(to: .now)) after kill -9"
        )

        let second = try Self.startHost(keepalive, serve)
        defer { signalAndReap(second, SIGTERM) }
        try await waitUntil(timeout: .seconds(10)) {
            (try? HostClient(socket: URL(fileURLWithPath: socket))) != nil
        }
        // Its group (or, with signals, its first process by its launch record) found again.
        let listing = try await runCommand(keepalive, ["host", "status", "--socket", socket, "--json"])
        #expect(listing.lines.joined().contains(#""app":"beat""#))
        #expect(listing.lines.joined().contains("adopted from an earlier host"), "\(listing.lines)")
        _ = try await runCommand(keepalive, ["host", "terminate", "--socket", socket, "--app", "beat"])
        let stopped = heartbeat.count
        try await Task.sleep(for: .seconds(3))
        #expect(heartbeat.count <= stopped + 1, "terminated")
        Leftovers.kill(Leftovers.processes(mentioning: heartbeat.path))
    }

    /// Starts `keepalive` (or any program) with `arguments`, standard output to /dev/null: a process of the test's own.
    static func startHost(_ keepalive: String, _ arguments: [String]) throws -> pid_t {
        try spawn([keepalive] + arguments, quietOutput: true)
    }
}

