import Foundation
import Glibc
import LocationKeepAlive
import IntegrationSupport
import TestWaiting
import Testing

/// The systemd unit runs the host as root with a few capabilities: the host started with
/// exactly the unit's `CapabilityBoundingSet` and `NoNewPrivileges` does all of its work on an
/// app of another user (launch as `nobody` with its output file, a delegated group the app
/// divides, freeze, thaw, terminate, stop with its groups removed).
@Suite(.timeLimit(.minutes(3)), .serialized)
struct HostServiceCapabilitiesTests {
    /// `setpriv --bounding-set` names for the unit's capabilities (CAP_SETUID becomes setuid).
    static func unitCapabilities() throws -> [String] {
        let unit = try String(contentsOf: Tools.repository.appendingPathComponent("systemd/keepalive-host.service"), encoding: .utf8)
        let line = try #require(unit.split(separator: "\n").first { $0.hasPrefix("CapabilityBoundingSet=") })
        return line.dropFirst("CapabilityBoundingSet=".count).split(separator: " ").map { $0.lowercased().replacingOccurrences(of: "cap_", with: "") }
    }

    @Test(arguments: [FreezerKind.cgroup2, .cgroup1])
    func theHostWorksWithTheUnitsCapabilitiesOnly(freezer: FreezerKind) async throws {
        let capabilities = try Self.unitCapabilities()
        #expect(!capabilities.isEmpty && !capabilities.contains("dac_override") && !capabilities.contains("sys_admin"))
        let keepalive = try Tools.keepalive.path
        let shared = try HostContainmentTests.SharedFolder()
        let socket = shared.file("host.sock")
        let name = "keepalive.test-caps-\(UUID().uuidString.prefix(8))"
        // As systemd starts it: in a group of the service's own (Delegate=yes), then the bounding set.
        let service = "keepalive.test-caps-\(UUID().uuidString.prefix(8)).service"
        let serviceGroups = ["/sys/fs/cgroup/unified/\(service)", "/sys/fs/cgroup/freezer/\(service)"]
        for group in serviceGroups { try FileManager.default.createDirectory(atPath: group, withIntermediateDirectories: false) }
        defer { for group in serviceGroups { rmdir(group) } }
        let host = try HostCrashTests.startHost(
            "/bin/sh",
            [
                "-c", #"for g in "$0" "$1"; do echo $$ > "$g/cgroup.procs" || exit 1; done; shift; exec "$@""#,
                serviceGroups[0], serviceGroups[1], "/usr/bin/setpriv",
                "--bounding-set=-all," + capabilities.map { "+" + $0 }.joined(separator: ","), "--inh-caps=-all",
                "--no-new-privs", keepalive, "host", "--socket", socket, "--freezer", freezer.rawValue, "--name", name,
            ]
        )
        let stopped = Locked(false)
        defer {  // a failed test must not leave the host behind (it holds the test's standard error)
            if !stopped.withLock({ $0 }) { signalAndReap(host) }
        }
        try await waitUntil(timeout: .seconds(10)) { FileManager.default.fileExists(atPath: socket) }
        let bounding = try String(contentsOfFile: "/proc/\(host)/status", encoding: .utf8)
            .split(separator: "\n").first { $0.hasPrefix("CapBnd:") }
        #expect(bounding?.hasSuffix("0000000000000000") == false && bounding?.contains("000001ffffffffff") == false)

        let heartbeat = Heartbeat()
        defer { heartbeat.remove() }
        // The app divides its delegated group (cgroup v2) and moves itself into the part.
        let divide = freezer == .cgroup2 ? "g=$(sed -n 's/^0:://p' /proc/self/cgroup); mkdir /sys/fs/cgroup/unified$g/part && echo $$ > /sys/fs/cgroup/unified$g/part/cgroup.procs; " : ""
        let control = ["host", "launch", "--socket", socket]
        let launched = try await runCommand(
            keepalive,
            control + ["--app", "beat", "--user", "nobody", "--output", shared.file("beat.out"), "--", "sh", "-c", divide + "id -u; " + heartbeat.loop]
        )
        #expect(launched.exitCode == 0, "\(launched.error)")
        try await heartbeat.waitForBeats(3)
        #expect((shared.read("beat.out") ?? "").hasPrefix("65534\n"), "\(shared.read("beat.out") ?? "")")
        if freezer == .cgroup2 {
            let part = "\(serviceGroups[0])/\(name)/beat/part/cgroup.procs"
            #expect((try? String(contentsOfFile: part, encoding: .utf8))?.isEmpty == false, "in the service's group, divided")
        }

        _ = try await runCommand(keepalive, ["host", "background", "--socket", socket, "--app", "beat"])
        try await waitUntil(timeout: .seconds(10)) { try await status(keepalive, socket)?.frozen == true }
        let beats = heartbeat.count
        try await Task.sleep(for: .milliseconds(500))
        #expect(heartbeat.count <= beats + 1)
        _ = try await runCommand(keepalive, ["host", "foreground", "--socket", socket, "--app", "beat"])
        try await heartbeat.waitForBeats(beats + 2)

        kill(host, SIGTERM)
        let result = await processExit(of: host, within: .seconds(30))
        stopped.withLock { $0 = true }
        #expect(result == .exited(0), "the host's exit: \(String(describing: result))")
        let root = (freezer == .cgroup2 ? serviceGroups[0] : serviceGroups[1]) + "/\(name)"
        #expect(!FileManager.default.fileExists(atPath: root), "the host's groups were left")
        let last = heartbeat.count
        try await Task.sleep(for: .milliseconds(300))
        #expect(heartbeat.count <= last + 1, "the app outlived the host")
    }

    private func status(_ keepalive: String, _ socket: String) async throws -> HostAppStatus? {
        let result = try await runCommand(keepalive, ["host", "status", "--socket", socket, "--app", "beat", "--json"])
        return try? JSONDecoder().decode(HostAppStatus.self, from: Data(result.lines.joined(separator: "\n").utf8))
    }
}
