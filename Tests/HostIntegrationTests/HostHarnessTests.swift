import Foundation
import Glibc
import LocationKeepAlive
import IntegrationSupport
import Testing

/// The harness itself: a test that fails before it stops its host leaves nothing behind. A
/// frozen app left alive holds the test process's standard output, and `swift test` (and CI
/// after it) waits for that output's end forever.
@Suite(.timeLimit(.minutes(2)), .serialized)
struct HostHarnessTests {
    @Test(arguments: [FreezerKind.cgroup2, .cgroup1, .signal])
    func aHarnessDroppedWithoutStoppingKillsItsFrozenAppsAndRemovesTheirGroups(freezer: FreezerKind) async throws {
        var root: String?
        var pid: Int32 = 0
        do {
            let harness = try await HostHarness(freezer: freezer, profile: HostScenarioTests.profile)
            pid = try await harness.launch("sleeper", ["sh", "-c", "sleep 600 & wait"])
            try await harness.move(.background, "sleeper")
            try await waitUntil(timeout: .seconds(10)) { harness.all.contains { $0.event.frozenApp == "sleeper" } }
            root = try Freezer.choose(freezer, name: harness.host.configuration.name).root
            // Dropped here, as a failed `#require` drops it: no `stop()`.
        }
        var status: Int32 = 0
        try await waitUntil(timeout: .seconds(10)) {  // reaped here, or by the host shutting down
            let reaped = waitpid(pid, &status, WNOHANG)
            return reaped == pid || (reaped == -1 && errno == ECHILD)
        }
        // No process of the app is left (its child, frozen or stopped, included). A killed child
        // leaves /proc a moment after its parent is reaped, later on a loaded machine (seen once
        // in a fresh-clone run with the signal freezer): gone within the patience, or left for good.
        try await waitUntil(timeout: .seconds(10)) { Leftovers.processes(withEnvironment: "KEEPALIVE_APP=sleeper").isEmpty }
        if let root { #expect(!FileManager.default.fileExists(atPath: root), "the host's groups are removed") }
    }
}
