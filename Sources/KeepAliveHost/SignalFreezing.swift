import Glibc
import KeepAliveCore
import KeepAliveHostProtocol

/// SIGSTOP and SIGCONT to every process of the app, as Ubuntu Touch does: its session, and every
/// process it started wherever it went (setsid, orphaned to pid 1), followed by the kernel's
/// process events. No group holds them: frozen is every one of them stopped.
struct SignalFreezing: GroupFreezing {
    /// The kernel's process events, which follow every process the app starts.
    let events: ProcessEvents

    var kind: FreezerKind { .signal }
    var cgroup: CgroupFolder? { nil }

    /// The session, what the kernel saw the app start, and their children it has not told of yet.
    func processes(of group: AppProcessGroup) -> [pid_t] {
        let leader = group.liveLeader
        let followed = Set(events.processes(of: group.app)).union(leader.map { [$0] } ?? [])
        return ProcessTable.now().processes(descendingFrom: followed, session: leader).sorted()
    }

    func isFrozen(_ group: AppProcessGroup) -> Bool { group.allStopped }

    func contains(_ pid: pid_t, in group: AppProcessGroup) -> Bool {
        if events.isFollowed(pid, as: group.app) { return true }
        guard let leader = group.liveLeader else { return false }
        return ProcFS.session(of: pid) == leader
    }

    func place(of pid: pid_t) -> String { ProcFS.session(of: pid).map { "session \($0)" } ?? "another session" }

    func freeze(_ group: AppProcessGroup, until deadline: ContinuousClock.Instant) async throws(HostError) {
        try await group.stopWithSignals(until: deadline)
    }

    /// The stopped processes are continued by the group, which knows them.
    func thaw(until deadline: ContinuousClock.Instant, while isNewest: () -> Bool) async throws(HostError) {}

    func thawNow() {}
}
