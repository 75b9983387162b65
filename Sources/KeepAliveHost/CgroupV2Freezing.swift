import Glibc
import KeepAliveCore
import KeepAliveHostProtocol

/// The cgroup v2 freezer (`cgroup.freeze`), as Android freezes cached apps: the kernel says
/// `frozen 1` in `cgroup.events`, and tells of the change through inotify.
struct CgroupV2Freezing: GroupFreezing {
    let folder: CgroupFolder

    var kind: FreezerKind { .cgroup2 }
    var cgroup: CgroupFolder? { folder }
    var eventsFolder: String? { folder.path }

    func processes(of group: AppProcessGroup) -> [pid_t] { folder.processes() }

    func isFrozen(_ group: AppProcessGroup) -> Bool { saysFrozen }

    func contains(_ pid: pid_t, in group: AppProcessGroup) -> Bool { folder.contains(pid) }

    func place(of pid: pid_t) -> String {
        ProcFS.cgroup(of: pid, controller: nil).map { "cgroup \($0)" } ?? "an unknown cgroup"
    }

    func freeze(_ group: AppProcessGroup, until deadline: ContinuousClock.Instant) async throws(HostError) {
        try ProcFS.write("1", to: "\(folder.path)/cgroup.freeze")
        guard await KernelWait.until(deadline, events: folder.path, { saysFrozen }) else {
            thawNow()  // never half frozen
            throw HostError(.freezeFailed, "\(folder.path) did not freeze in time")
        }
    }

    func thaw(until deadline: ContinuousClock.Instant, while isNewest: () -> Bool) async throws(HostError) {
        try ProcFS.write("0", to: "\(folder.path)/cgroup.freeze")
        guard await KernelWait.until(deadline, events: folder.path, { !isNewest() || !saysFrozen }) else {
            throw HostError(.freezeFailed, "\(folder.path) did not thaw in time")
        }
    }

    func thawNow() { try? ProcFS.write("0", to: "\(folder.path)/cgroup.freeze") }

    /// `usage_usec` of the group's `cpu.stat`.
    func cpuTime() -> Duration? {
        let lines = (KernelFile.read("\(folder.path)/cpu.stat") ?? "").split(separator: "\n")
        return lines.lazy.compactMap { line in
            line.hasPrefix("usage_usec ") ? Int64(line.dropFirst("usage_usec ".count)).map(Duration.microseconds) : nil
        }.first
    }

    /// `cgroup.kill`: every process of the group and the groups inside, frozen or not.
    func killAll() -> Bool { (try? ProcFS.write("1", to: "\(folder.path)/cgroup.kill")) != nil }

    /// The folder and its `cgroup.procs`, `cgroup.threads` and `cgroup.subtree_control` become
    /// the owner's (not when the owner is the host's own user).
    func delegate(to owner: AppUser) throws(HostError) {
        guard owner.uid != UInt32(geteuid()) else { return }
        for file in ["", "/cgroup.procs", "/cgroup.threads", "/cgroup.subtree_control"] {
            guard chown(folder.path + file, uid_t(owner.uid), gid_t(owner.gid)) == 0 else {
                throw ProcFS.failure("cannot delegate \(folder.path + file) to \(owner)", code: .launchFailed)
            }
        }
    }

    /// `frozen 1` in `cgroup.events`.
    private var saysFrozen: Bool {
        (KernelFile.read("\(folder.path)/cgroup.events") ?? "").split(separator: "\n").contains("frozen 1")
    }
}
