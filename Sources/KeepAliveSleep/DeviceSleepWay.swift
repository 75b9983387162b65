/// Through what a device's sleep is followed and held: Linux devices sleep in more than one way.
public enum DeviceSleepWay: String, Sendable, CaseIterable, CustomStringConvertible {
    /// By what the system has: logind where it is on the system bus, the kernel's wakelocks
    /// where the kernel offers them (`/sys/power/wake_lock`), both where it has both.
    case auto
    /// systemd-logind: a sleep lock, its announcement of a sleep (the preparation), a suspend
    /// asked after a wake's work.
    case logind
    /// The kernel's wakelocks (a suspender that sleeps whenever none is held: Sxmo's phones,
    /// Android's autosleep): a named wakelock held by the same rules, released after a wake's work.
    case wakelocks
    /// Both: a system whose logind announces some sleeps while another suspender watches the
    /// wakelocks.
    case both

    /// Whether logind is followed.
    public var usesLogind: Bool { self != .wakelocks }
    /// Whether a wakelock is held.
    public var usesWakelocks: Bool { self != .logind }

    /// The way in words: "logind", "the kernel's wakelocks", "logind and the kernel's wakelocks".
    public var description: String {
        switch self {
        case .auto: "what the system has"
        case .logind: "logind"
        case .wakelocks: "the kernel's wakelocks"
        case .both: "logind and the kernel's wakelocks"
        }
    }
}
