import Glibc
import KeepAliveCore
import KeepAliveHostProtocol

/// How one freezer holds an app's group: which processes are the app's, how they are frozen
/// and thawed, and where one that left went. One type per freezer (``CgroupV2Freezing``,
/// ``CgroupV1Freezing``, ``SignalFreezing``); ``AppProcessGroup`` keeps what they share: the
/// app's first process, the processes stopped with signals and the order of the host's requests.
protocol GroupFreezing: Sendable {
    /// Which freezer this is.
    var kind: FreezerKind { get }
    /// The group's cgroup (`nil`: a session, with signals).
    var cgroup: CgroupFolder? { get }
    /// The v2 folder whose `cgroup.events` tells of changes (`nil`: the kernel says nothing).
    var eventsFolder: String? { get }
    /// The app's processes as this freezer counts them, zombies included.
    func processes(of group: AppProcessGroup) -> [pid_t]
    /// Whether the kernel says the group is frozen now.
    func isFrozen(_ group: AppProcessGroup) -> Bool
    /// Whether `pid` belongs to the app.
    func contains(_ pid: pid_t, in group: AppProcessGroup) -> Bool
    /// Where a process that left the group is now, in words (`cgroup /`, `session 1234`).
    func place(of pid: pid_t) -> String
    /// Freezes the group; the kernel's word is awaited until `deadline`.
    func freeze(_ group: AppProcessGroup, until deadline: ContinuousClock.Instant) async throws(HostError)
    /// Thaws the group; the kernel's word is awaited until `deadline`, or until `isNewest` is
    /// false (the host asked again meanwhile).
    func thaw(until deadline: ContinuousClock.Instant, while isNewest: () -> Bool) async throws(HostError)
    /// Thaws at once without waiting.
    func thawNow()
    /// The CPU time the kernel counts for the whole group (`nil`: it counts none; the caller
    /// sums the live processes').
    func cpuTime() -> Duration?
    /// Kills every process of the group at once, if the kernel can; `false`: it cannot, and
    /// the caller signals each process.
    func killAll() -> Bool
    /// Gives the group to `owner` as systemd delegates, where the freezer can.
    func delegate(to owner: AppUser) throws(HostError)
}

extension GroupFreezing {
    var eventsFolder: String? { nil }
    func cpuTime() -> Duration? { nil }
    func killAll() -> Bool { false }
    func delegate(to owner: AppUser) throws(HostError) {}
}

/// An app's cgroup: its folder, what `/proc/PID/cgroup` calls it, and every group the app made inside.
struct CgroupFolder: Sendable {
    /// The folder, e.g. `/sys/fs/cgroup/keepalive.host/app`.
    let path: String
    /// The group as `/proc/PID/cgroup` names it.
    let hierarchyPath: String
    /// The v1 controller of its hierarchy (`nil`: the v2 hierarchy).
    let controller: String?

    /// The processes in it and in every group inside, as the kernel lists them.
    func processes() -> [pid_t] {
        folders().flatMap { folder in
            (KernelFile.read("\(folder)/cgroup.procs") ?? "").split(separator: "\n").compactMap { pid_t($0) }
        }
    }

    /// Whether `pid` is in it or in a group inside.
    func contains(_ pid: pid_t) -> Bool {
        guard let own = ProcFS.cgroup(of: pid, controller: controller) else { return false }
        return own == hierarchyPath || own.hasPrefix(hierarchyPath + "/")
    }

    /// The folder and every folder the app made inside it, deepest last.
    func folders() -> [String] {
        var found = [path]
        var index = 0
        while index < found.count {
            let folder = found[index]
            index += 1
            found += Self.subfolders(of: folder).map { "\(folder)/\($0)" }
        }
        return found
    }

    /// The names of the folders directly inside `folder` (none when it cannot be read).
    static func subfolders(of folder: String) -> [String] {
        guard let directory = opendir(folder) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            guard entry.pointee.d_type == UInt8(DT_DIR) else { continue }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }
}
