import Foundation
import Glibc
import LocationKeepAlive
import IntegrationSupport
import TestWaiting
import Testing

/// Each freezer on real processes: a shell writing a heartbeat every 100 ms, and its child.
@Suite(.timeLimit(.minutes(2)), .serialized)
struct FreezerTests {
    /// What a freeze here may take: a process in an uninterruptible wait (its heartbeat's append
    /// behind a build's writes to the same disk) takes SIGSTOP, or the cgroup freezer, only when
    /// the wait ends, which on a loaded machine can be past the host's 2 s. These tests are about
    /// what is frozen, not how fast (their times are printed; scripts/bench-host measures them).
    static let patience: Duration = .seconds(20)

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

        let freezeTime = try await group.freeze(timeout: Self.patience)
        let beatsAtFreeze = heartbeat.count
        let cpuAtFreeze = group.cpuTime()
        try await Task.sleep(for: .milliseconds(600))
        #expect(heartbeat.count <= beatsAtFreeze + 1, "the heartbeat went on while frozen")
        #expect(group.cpuTime() - cpuAtFreeze < .milliseconds(5))
        #expect(group.isFrozen)

        let thawTime = try await group.thaw()
        try await heartbeat.waitForBeats(beatsAtFreeze + 3)
        print("\(kind): freeze \(freezeTime), thaw \(thawTime)")

        try await group.freeze(timeout: Self.patience)
        group.signalAll(SIGKILL)  // reaches frozen processes too
        try await waitUntil(timeout: .seconds(5)) { group.processes().isEmpty }
        _ = await processExit(of: leader, within: .seconds(10))
        try group.remove()
        if let folder = group.folder { #expect(!FileManager.default.fileExists(atPath: folder.path)) }
    }

    /// A thaw waits for the kernel's word that the group runs; when the host freezes the
    /// group again before it came (the app ran its moment of work, or a loaded host read the
    /// kernel late), the thaw ends there, without an error, and the group stays frozen as last
    /// asked. The kernel is kept saying "frozen" here by freezing the root above the group.
    @Test func aThawOvertakenByAFreezeEndsAndTheGroupStaysFrozen() async throws {
        let freezer = try Freezer.choose(.cgroup2, name: "keepalive.test-\(UInt32.random(in: 0...UInt32.max))")
        let root = try #require(freezer.root)
        let group = try freezer.makeGroup(for: "worker")
        defer {
            try? "0".write(toFile: "\(root)/cgroup.freeze", atomically: false, encoding: .utf8)
            group.signalAll(SIGKILL)
            try? group.remove()
            freezer.removeRoot()
        }
        let leader = try group.launch(["sleep", "600"])
        try await group.freeze()
        try "1".write(toFile: "\(root)/cgroup.freeze", atomically: false, encoding: .utf8)

        let thawing = Task { try await group.thaw(timeout: .seconds(60)) }
        try await Task.sleep(for: .milliseconds(200))  // the thaw is waiting: the root keeps the group frozen
        try await group.freeze()
        let waited = try await thawing.value  // without the fix: "did not thaw within 60 seconds"
        #expect(waited < .seconds(60))
        #expect(group.isFreezeRequested, "the freeze came last: the group is to stay frozen")
        #expect(group.isFrozen)

        try "0".write(toFile: "\(root)/cgroup.freeze", atomically: false, encoding: .utf8)
        #expect(group.isFrozen, "frozen by its own cgroup.freeze once the root thaws")
        group.signalAll(SIGKILL)
        _ = await processExit(of: leader, within: .seconds(10))
    }

    @Test func anUnavailableFreezerSaysWhy() throws {
        let error = #expect(throws: HostError.self) { try Freezer.choose(.cgroup1, name: "no/such/parent/x") }
        #expect(error?.code == .freezerUnavailable && error?.message.contains("--freezer cgroup1") == true)
        let fallback = try Freezer.choose(nil, name: "no/such/parent/x")
        #expect(fallback.kind == .signal && fallback.reason.contains("falling back"))
    }

    /// Once an app's first process has ended, its pid, which is its session's id, can be given
    /// to a stranger: pids wrap (at 32,768 here) and a test run starts thousands of processes. A
    /// stranger with that pid and a session of its own (as `setsid` makes, as gpsfake's tests
    /// start it) is not the app's: not among its processes, not stopped by its freeze. Before,
    /// it was both (a gpsd stopped so in a test run went silent for minutes). The stranger gets the
    /// pid through `ns_last_pid` (root); another process may take it first, so it is tried again.
    @Test func aStrangerGivenTheEndedLeadersPidIsNotTheApps() async throws {
        let group = try Freezer.choose(.signal).makeGroup(for: "short-lived")
        defer {
            group.signalAll(SIGKILL)
            try? group.remove()
        }
        let leader = try group.launch(["true"])
        _ = await processExit(of: leader, within: .seconds(10))
        // A start time counts clock ticks (10 ms): a pid comes back only after every other pid
        // was used, never within a tick, as it would here without this pause.
        try await Task.sleep(for: .milliseconds(50))
        var stranger: pid_t = -1
        for _ in 0..<50 where stranger != leader {
            try "\(leader - 1)".write(toFile: "/proc/sys/kernel/ns_last_pid", atomically: false, encoding: .utf8)
            stranger = try spawn(["/bin/sleep", "60"], ownSession: true)
            if stranger != leader {
                kill(stranger, SIGKILL)
                _ = await processExit(of: stranger, within: .seconds(10))
            }
        }
        try #require(stranger == leader, "no process got pid \(leader) again in 50 tries")
        defer { signalAndReap(stranger) }
        #expect(Self.stat(stranger)?[3] == "\(leader)", "the stranger leads a session with the leader's id")
        #expect(!group.processes().contains(stranger))
        #expect(!group.contains(stranger))
        try await group.freeze(timeout: Self.patience)
        #expect(Self.stat(stranger)?[0] != "T", "the app's freeze stopped a stranger")
    }

    /// `/proc/PID/stat` after the command's name: state, parent, group, session...
    static func stat(_ pid: pid_t) -> [Substring]? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = text.lastIndex(of: ")") else { return nil }
        return text[text.index(after: close)...].split(separator: " ")
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
