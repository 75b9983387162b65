/// What an app may make of its group: the cgroups inside it and its processes, so that an
/// app cannot bury the host in groups to walk or fork the board to a halt.
///
/// cgroup v2 groups get `cgroup.max.descendants` and `cgroup.max.depth` (an app may make
/// groups inside its own once it is delegated to its user). Processes are counted by the pids
/// controller: in the app's v2 group when v2 has it, else in a group of the v1 `pids`
/// hierarchy the app's first process joins beside its freezer group (`pids.max`). Threads
/// count as processes there, as the kernel counts them.
public struct AppGroupLimits: Sendable, Hashable {
    /// Groups an app may have inside its own, all levels together.
    public var groups = 64
    /// How deep its groups may nest below its own.
    public var depth = 4
    /// Processes and threads the app may run at once.
    public var processes = 512

    /// The defaults.
    public init() {}
}
