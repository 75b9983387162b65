/// How the host stops an app's processes.
public enum FreezerKind: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The cgroup v2 freezer (`cgroup.freeze`), as Android freezes cached apps.
    case cgroup2
    /// The cgroup v1 freezer controller (`freezer.state`).
    case cgroup1
    /// SIGSTOP and SIGCONT to every process of the app's session, as Ubuntu Touch does.
    case signal

    /// The kind's name, as `--freezer` takes it.
    public var description: String { rawValue }
}
