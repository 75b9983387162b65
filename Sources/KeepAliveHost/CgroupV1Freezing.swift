import Glibc
import KeepAliveCore
import KeepAliveHostProtocol

/// The cgroup v1 freezer controller (`freezer.state`). A group can stick in `FREEZING` (a task
/// in an uninterruptible wait): it is asked again every 50 ms, and at the deadline thawed and
/// stopped with signals instead, within 2 s more. The kernel tells of no change: its state is looked at.
struct CgroupV1Freezing: GroupFreezing {
    let folder: CgroupFolder

    var kind: FreezerKind { .cgroup1 }
    var cgroup: CgroupFolder? { folder }

    func processes(of group: AppProcessGroup) -> [pid_t] { folder.processes() }

    /// `FROZEN`, or every process stopped (a group whose freezer stuck, stopped with signals).
    func isFrozen(_ group: AppProcessGroup) -> Bool { state == "FROZEN" || group.allStopped }

    func contains(_ pid: pid_t, in group: AppProcessGroup) -> Bool { folder.contains(pid) }

    func place(of pid: pid_t) -> String {
        ProcFS.cgroup(of: pid, controller: "freezer").map { "freezer cgroup \($0)" } ?? "an unknown cgroup"
    }

    func freeze(_ group: AppProcessGroup, until deadline: ContinuousClock.Instant) async throws(HostError) {
        let clock = ContinuousClock()
        try ProcFS.write("FROZEN", to: "\(folder.path)/freezer.state")
        while state != "FROZEN" {
            guard clock.now < deadline else {
                thawNow()
                try await group.stopWithSignals(until: clock.now + .seconds(2))
                return
            }
            if await KernelWait.until(min(deadline, clock.now + .milliseconds(50)), { state == "FROZEN" }) { return }
            try? ProcFS.write("FROZEN", to: "\(folder.path)/freezer.state")  // still FREEZING: ask again
        }
    }

    /// `THAWED` is at once: nothing to wait for.
    func thaw(until deadline: ContinuousClock.Instant, while isNewest: () -> Bool) async throws(HostError) {
        try ProcFS.write("THAWED", to: "\(folder.path)/freezer.state")
    }

    func thawNow() { try? ProcFS.write("THAWED", to: "\(folder.path)/freezer.state") }

    private var state: String? { KernelFile.read("\(folder.path)/freezer.state")?.trimmed }
}
