import Glibc
import KeepAliveCore
@testable import KeepAliveHost
@testable import KeepAliveHostProtocol
import Testing

/// What an app's group does whichever freezer holds it, on a freezer of the test's own: what
/// it says the host asked, a failed freeze, and a thaw overtaken by a newer freeze. Each
/// freezer's own part is proven on the kernel by FreezerTests (as root).
struct AppProcessGroupTests {
    /// A freezer that does what the test says: a freeze succeeds or fails, a thaw waits until
    /// released or overtaken.
    final class TestFreezing: GroupFreezing, Sendable {
        let freezeFails: Bool
        let frozen = Locked(false)
        let thawsStarted = ObservedState(0)
        let thawsReleased = Locked(false)

        init(freezeFails: Bool = false) { self.freezeFails = freezeFails }

        var kind: FreezerKind { .cgroup2 }
        var cgroup: CgroupFolder? { nil }
        func processes(of group: AppProcessGroup) -> [Int32] { [] }
        func isFrozen(_ group: AppProcessGroup) -> Bool { frozen.withLock { $0 } }
        func contains(_ pid: Int32, in group: AppProcessGroup) -> Bool { false }
        func place(of pid: Int32) -> String { "nowhere" }

        func freeze(_ group: AppProcessGroup, until deadline: ContinuousClock.Instant) async throws(HostError) {
            if freezeFails { throw HostError(.freezeFailed, "the test's freezer did not freeze") }
            frozen.withLock { $0 = true }
        }

        func thaw(until deadline: ContinuousClock.Instant, while isNewest: () -> Bool) async throws(HostError) {
            frozen.withLock { $0 = false }
            thawsStarted.update { $0 += 1 }
            _ = await KernelWait.until(deadline) { !isNewest() || thawsReleased.withLock { $0 } }
        }

        func thawNow() { frozen.withLock { $0 = false } }
    }

    @Test func theGroupSaysWhatTheHostLastAsked() async throws {
        let freezing = TestFreezing()
        let group = AppProcessGroup(app: "tracker", freezing: freezing)
        #expect(!group.isFreezeRequested)
        try await group.freeze()
        #expect(group.isFreezeRequested && group.isFrozen)
        freezing.thawsReleased.withLock { $0 = true }
        try await group.thaw()
        #expect(!group.isFreezeRequested && !group.isFrozen)
        try await group.freeze()
        group.thawNow()
        #expect(!group.isFreezeRequested && !group.isFrozen)
    }

    @Test func aFreezeThatFailsSaysSoAndLeavesTheGroupAsItWas() async {
        let group = AppProcessGroup(app: "tracker", freezing: TestFreezing(freezeFails: true))
        let error = await #expect(throws: HostError.self) { try await group.freeze() }
        #expect(error?.code == .freezeFailed)
        #expect(!group.isFreezeRequested)
    }

    /// An app thawed for a moment of work can finish it and be frozen again before the thaw's
    /// wait for the kernel ends: the thaw then ends at once and leaves the group frozen.
    @Test func aThawOvertakenByANewerFreezeEndsAndLeavesTheGroupFrozen() async throws {
        let freezing = TestFreezing()
        let group = AppProcessGroup(app: "tracker", freezing: freezing)
        try await group.freeze()
        // Timeouts no run reaches (beside the other suites, a sleep of 1 ms once took 20 s): the
        // thaw ends because it was overtaken, never by its timeout.
        let thaw = Task { try await group.thaw(timeout: .seconds(3600)) }
        _ = await freezing.thawsStarted.wait(until: { $0 == 1 }, timeout: .seconds(3600))
        try await group.freeze()
        let waited = try await thaw.value
        #expect(waited < .seconds(3600), "the thaw waited for the kernel after the newer freeze")
        #expect(group.isFreezeRequested && group.isFrozen)
    }
}

/// What a freeze that failed says of a process that would not stop: enough to tell a process
/// busy in the kernel from one that never got the signal.
struct ProcessPortraitTests {
    @Test func aProcessIsDescribedByItsCommandStateWaitParentAndSignals() throws {
        let portrait = ProcFS.portrait(of: getpid())
        let command = try #require(KernelFile.read("/proc/self/comm")?.trimmed)
        // Its main thread's state (the test runs on another), read a moment later.
        #expect(portrait.hasPrefix("\(getpid()) (\(command)) in state "))
        #expect(portrait.contains(", wchan "))
        #expect(portrait.contains("parent \(getppid()), started at tick \(ProcFS.startTime(of: getpid())!)"))
        for key in ["SigPnd ", "ShdPnd ", "SigBlk ", "SigIgn ", "TracerPid 0"] { #expect(portrait.contains(key)) }
    }

    @Test func aProcessThatIsGoneIsSaidUnknown() {
        #expect(ProcFS.portrait(of: 4_194_304 + 1) == "4194305 (?) in state ?, wchan ?, parent ?, started at tick ?")
    }
}
