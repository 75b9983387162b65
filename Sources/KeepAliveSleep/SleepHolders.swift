/// Who else holds the device awake: what a back-to-sleep asks before it asks logind to suspend.
///
/// logind's own check is not enough. It ignores the block locks of the caller's own user when
/// it decides a suspend (`manager_is_inhibited(..., ignore_uid = true, uid, ...)`), and
/// `SD_LOGIND_ROOT_CHECK_INHIBITORS` makes root respect the other users' locks only: a tracker or
/// host running as root would override every lock root holds (an upgrade's, a root daemon's,
/// `systemd-inhibit` run with sudo), and the packaged service every lock of its own user. So
/// every block lock on sleep held by another process counts, whatever its user, and every
/// wakelock of the kernel's but our own.
public enum SleepHolders {
    /// One of logind's inhibitor locks, as `ListInhibitors` lists it (`a(ssssuu)`).
    public struct Inhibitor: Sendable, Equatable {
        /// What it inhibits: `sleep`, `shutdown`, `idle`, … joined by `:`.
        public var what: String
        /// Who took it, as `systemd-inhibit --list` shows it.
        public var who: String
        /// Why.
        public var why: String
        /// `block` or `delay`.
        public var mode: String
        /// The user that took it.
        public var uid: UInt32
        /// The process that took it.
        public var pid: UInt32

        /// A lock as logind lists it.
        public init(what: String, who: String, why: String, mode: String, uid: UInt32, pid: UInt32) {
            self.what = what
            self.who = who
            self.why = why
            self.mode = mode
            self.uid = uid
            self.pid = pid
        }
    }

    /// The names of those that hold the device awake besides us: each block lock on sleep of
    /// another process (its `who`), each wakelock in the kernel's list (`wakelocks`, the text
    /// of `/sys/power/wake_lock`: names separated by spaces) but `ownWakelock`. In order, each once.
    public static func others(inhibitors: [Inhibitor], wakelocks: String?, ownPID: UInt32, ownWakelock: String?) -> [String] {
        let locks = inhibitors.filter { lock in
            lock.mode == "block" && lock.pid != ownPID && lock.what.split(separator: ":").contains("sleep")
        }
        let names = locks.map { $0.who.isEmpty ? "pid \($0.pid)" : $0.who }
            + (wakelocks ?? "").split(whereSeparator: \.isWhitespace).map(String.init).filter { $0 != ownWakelock }
        var seen = Set<String>()
        return names.filter { seen.insert($0).inserted }
    }
}
