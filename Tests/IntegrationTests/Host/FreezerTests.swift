import Foundation
import Glibc
import LocationKeepAlive
import Testing

/// Each freezer on real processes: a shell writing a heartbeat every 100 ms, and its child.
@Suite(.timeLimit(.minutes(2)), .serialized)
struct FreezerTests {
    @Test(arguments: [FreezerKind.cgroup2, .cgroup1, .signal])
    func freezesThawsAndKillsEveryProcessOfAnApp(kind: FreezerKind) async throws {
        let freezer = try Freezer.choose(kind, name: "keepalive.test-\(UInt32.random(in: 0...UInt32.max))")
        #expect(freezer.kind == kind)
        let group = try freezer.makeGroup(for: "heartbeat")
        defer {
            group.signalAll(SIGKILL)
            try? group.remove()
            freezer.removeRoot()
        }
        let heartbeat = Heartbeat()
        defer { heartbeat.remove() }
        // The heartbeat comes from a child of the shell: children belong to the app too.
        let leader = try group.launch(["sh", "-c", "(\(heartbeat.loop)) & wait"])
        try await heartbeat.waitForBeats(3)
        #expect(group.contains(leader))
        #expect(!group.contains(getpid()))
        #expect(group.processes().count >= 2)

        let freezeTime = try await group.freeze()
        let beatsAtFreeze = heartbeat.count
        let cpuAtFreeze = group.cpuTime()
        try await Task.sleep(for: .milliseconds(600))
        #expect(heartbeat.count <= beatsAtFreeze + 1, "the heartbeat went on while frozen")
        #expect(group.cpuTime() - cpuAtFreeze < .milliseconds(5))
        #expect(group.isFrozen)

        let thawTime = try await group.thaw()
        try await heartbeat.waitForBeats(beatsAtFreeze + 3)
        print("\(kind): freeze \(freezeTime), thaw \(thawTime)")

        try await group.freeze()
        group.signalAll(SIGKILL)  // reaches frozen processes too
        try await waitUntil(timeout: .seconds(5)) { group.processes().isEmpty }
        var status: Int32 = 0
        waitpid(leader, &status, 0)
        try group.remove()
        if let folder = group.folder { #expect(!FileManager.default.fileExists(atPath: folder.path)) }
    }

    @Test func anUnavailableFreezerSaysWhy() throws {
        let error = #expect(throws: HostError.self) { try Freezer.choose(.cgroup1, name: "no/such/parent/x") }
        #expect(error?.code == .freezerUnavailable && error?.message.contains("--freezer cgroup1") == true)
        let fallback = try Freezer.choose(.auto, name: "no/such/parent/x")
        #expect(fallback.kind == .signal && fallback.reason.contains("falling back"))
    }

    @Test func aCommandThatDoesNotExistIsAClearError() throws {
        let group = try Freezer.choose(.signal).makeGroup(for: "missing")
        let error = #expect(throws: HostError.self) { try group.launch(["no-such-command-here"]) }
        #expect(error?.code == .launchFailed && error?.message.contains("no such executable file in PATH") == true)
    }
}

/// A file a shell loop appends to every 100 ms.
struct Heartbeat {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("heartbeat-\(UUID().uuidString)").path
    var loop: String { "while :; do date +%s%N >> '\(path)'; sleep 0.1; done" }
    var count: Int { ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").count }
    /// Beat times, in seconds since 1970.
    var times: [Double] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").compactMap {
            Double($0).map { $0 / 1e9 }
        }
    }
    func waitForBeats(_ beats: Int, timeout: Duration = .seconds(10)) async throws {
        try await waitUntil(timeout: timeout) { count >= beats }
    }
    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// Polls `condition` every 10 ms until it holds; fails after `timeout`.
func waitUntil(
    timeout: Duration,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: () -> Bool
) async throws {
    let deadline = ContinuousClock.now + Tools.bound(timeout)
    while !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("condition did not hold within \(timeout)", sourceLocation: sourceLocation)
            throw CancellationError()
        }
        try await Task.sleep(for: .milliseconds(10))
    }
}
