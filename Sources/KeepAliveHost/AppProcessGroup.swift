public import FoundationEssentials
import Glibc
import KeepAliveCore
public import KeepAliveHostProtocol

/// Every process of one app, frozen, thawed and killed as one: a cgroup (v2 or v1 freezer)
/// with any groups the app made inside it, or, with signals, the session the app was started in.
///
/// What it says of itself is what the kernel says: ``isFrozen`` reads the freezer (or every
/// process's state), and ``escapes()`` finds the app's processes that are no longer in it.
public final class AppProcessGroup: Sendable {
    /// The app's name.
    public let app: String
    /// How this freezer holds the group: the only part that differs between freezers.
    let freezing: any GroupFreezing
    /// The app's group in the v1 `pids` hierarchy, where its processes are counted when the
    /// v2 group cannot count them.
    let pidsPath: String?
    private let state = Locked(GroupState())

    private struct GroupState {
        /// The session leader (the app's first process), for signals.
        var leader: pid_t?
        /// When the leader started: with its pid, it names that one process.
        var leaderStart: UInt64?
        /// Frozen as the host last asked (the kernel's answer is ``isFrozen``).
        var isFreezeRequested = false
        /// Processes stopped with SIGSTOP (signals, or a v1 freezer stuck in FREEZING).
        var stopped: [pid_t] = []
        /// Counts the host's freezes and thaws: a thaw waiting for the kernel stops waiting
        /// once a newer request came (the app ran meanwhile and was frozen again).
        var requests = 0
    }

    init(app: String, freezing: any GroupFreezing, pidsPath: String? = nil) {
        self.app = app
        self.freezing = freezing
        self.pidsPath = pidsPath
    }

    /// How it is frozen.
    public var kind: FreezerKind { freezing.kind }
    /// The cgroup folder (`nil` with signals).
    public var folder: URL? { path.map { URL(fileURLWithPath: $0, isDirectory: true) } }
    /// The cgroup folder's path, for the kernel's files (`nil` with signals).
    var path: String? { freezing.cgroup?.path }

    /// The files a process writes its pid to, to join (`cgroup.procs`); none with signals.
    var joinFiles: [String] { [path, pidsPath].compactMap { $0.map { "\($0)/cgroup.procs" } } }

    /// The app's first process, once launched.
    public var leader: Int32? {
        get { state.withLock { $0.leader } }
        set {
            let start = newValue.flatMap(ProcFS.startTime(of:))
            state.withLock { state in
                state.leader = newValue
                state.leaderStart = start
            }
            if let newValue, let signals = freezing as? SignalFreezing { signals.events.follow(newValue, as: app) }
        }
    }

    /// The leader while it is still the process that was launched: once it has ended, its pid
    /// (and so its session id) can be taken by a stranger (pids wrap at 32,768 on many systems),
    /// and the session would then be a stranger's. The app's processes that outlive the leader
    /// are the ones the kernel's events follow.
    var liveLeader: pid_t? {
        let (leader, start) = state.withLock { ($0.leader, $0.leaderStart) }
        guard let leader, ProcFS.isProcess(leader, startedAt: start) else { return nil }
        return leader
    }

    /// Processes stopped with SIGSTOP now, for a watchdog to continue if the host dies.
    public var stoppedProcesses: [Int32] { state.withLock { $0.stopped } }

    /// Whether the host last asked for the group to be frozen.
    public var isFreezeRequested: Bool { state.withLock { $0.isFreezeRequested } }

    /// Whether the kernel says the group is frozen now: `frozen 1` in `cgroup.events` (v2),
    /// `FROZEN` in `freezer.state` (v1), or every process stopped (signals, and a v1 group
    /// stopped with signals when its freezer stuck). Never what the host asked, only what is.
    public var isFrozen: Bool { freezing.isFrozen(self) }

    /// Whether the group has processes and every one is stopped (or waits in `vfork` for a
    /// stopped child, which holds it as surely: ``ProcFS/isHeld(_:among:)``).
    var allStopped: Bool {
        let members = processes()
        return !members.isEmpty && members.allSatisfy { ProcFS.isHeld($0, among: members) }
    }

    /// Starts the app's command in the group, in a session of its own (the command first,
    /// looked up in `PATH`; `environment` added to the host's; `output` a file for its
    /// standard output and error, or `nil` to share the host's).
    ///
    /// - Returns: the app's first process id.
    @discardableResult
    public func launch(
        _ arguments: [String],
        as user: AppUser = .current,
        environment: [String: String] = [:],
        output: String? = nil
    ) throws(HostError) -> Int32 {
        try AppLauncher.launch(arguments, in: self, as: user, environment: environment, output: output)
    }

    /// The processes in the group and in every group the app made inside it, zombies left out.
    public func processes() -> [Int32] {
        freezing.processes(of: self).filter { ProcFS.state(of: $0) != "Z" }
    }

    /// The app's processes that are not in the group: its first process, every process of its
    /// session, and all their descendants, wherever they are now (another cgroup, another
    /// session). Empty for an app that stays in its group.
    public func escapes() -> [Escape] {
        let table = ProcessTable.now()
        let members = Set(processes())
        let leader = liveLeader
        let roots = members.union(leader.map { [$0] } ?? [])
        let found = table.processes(descendingFrom: roots, session: leader)
        return found.subtracting(members).sorted().map { pid in
            let command = KernelFile.read("/proc/\(pid)/comm")?.trimmed ?? "?"
            return Escape(pid: pid, command: command, place: freezing.place(of: pid))
        }
    }

    /// One of the app's processes found outside its group.
    public struct Escape: Sendable, Hashable, CustomStringConvertible {
        /// Its process id.
        public let pid: Int32
        /// Its command name (`/proc/PID/comm`).
        public let command: String
        /// Where it is: `cgroup /`, `freezer cgroup /`, `session 1234`.
        public let place: String
        /// `process 1234 (sh) left its group for cgroup /`.
        public var description: String { "process \(pid) (\(command)) left its group for \(place)" }
    }

    /// Whether `pid` belongs to the app (the caller-identity check of the control socket).
    public func contains(_ pid: Int32) -> Bool { freezing.contains(pid, in: self) }

    /// CPU time the app has used: the cgroup's own count (v2), or its live processes' sum.
    public func cpuTime() -> Duration {
        freezing.cpuTime() ?? processes().compactMap(ProcFS.cpuTime(of:)).reduce(.zero, +)
    }

    /// Freezes every process and waits until the kernel says they are frozen.
    ///
    /// - Returns: how long it took.
    /// - Throws: ``HostError/Code/freezeFailed`` when the freezer cannot be written, or the
    ///   group did not freeze within `timeout` (it is thawed again then: never half frozen).
    @discardableResult
    public func freeze(timeout: Duration = .seconds(2)) async throws(HostError) -> Duration {
        let clock = ContinuousClock()
        let start = clock.now
        state.withLock { $0.requests += 1 }
        try await freezing.freeze(self, until: start + timeout)
        state.withLock { $0.isFreezeRequested = true }
        return start.duration(to: clock.now)
    }

    /// Thaws the group and waits until it runs, or until the host asked to freeze it again:
    /// an app thawed for a moment of work can finish it and be frozen again before a loaded
    /// host reads the kernel's word that it ran.
    @discardableResult
    public func thaw(timeout: Duration = .seconds(2)) async throws(HostError) -> Duration {
        let clock = ContinuousClock()
        let start = clock.now
        let request = state.withLock { state in
            state.requests += 1
            return state.requests
        }
        let isNewest = { self.state.withLock { $0.requests == request } }
        try await freezing.thaw(until: start + timeout, while: isNewest)
        guard isNewest() else { return start.duration(to: clock.now) }  // frozen again: leave it so
        continueStopped()
        state.withLock { $0.isFreezeRequested = false }
        return start.duration(to: clock.now)
    }

    /// Thaws at once without waiting (a host starting over, or stopping).
    public func thawNow() {
        state.withLock { $0.requests += 1 }
        freezing.thawNow()
        continueStopped()
        state.withLock { $0.isFreezeRequested = false }
    }

    /// Sends `signal` to every process of the app. SIGKILL reaches frozen processes too: a v1
    /// freezer holds the killed tasks until thawed, so the group is thawed after it.
    public func signalAll(_ signal: Int32) {
        if signal == SIGKILL, freezing.killAll() { return }
        for pid in processes() { kill(pid, signal) }
        if signal == SIGKILL, isFreezeRequested { thawNow() }
    }

    /// With cgroup v2 and an `owner` other than the host's user, gives the group to the owner
    /// as systemd delegates (once the app's first process has joined it, which the host's
    /// shell does as the file's owner): the folder and its `cgroup.procs`, `cgroup.threads` and
    /// `cgroup.subtree_control` become the owner's, so the app may make groups inside its own and
    /// move its processes between them. Every file that freezes, kills or limits it, and every
    /// folder above it, stays the host's: it can neither thaw itself nor move out (a move needs
    /// write access to the common ancestor's `cgroup.procs`). v1 groups are not delegated.
    public func delegate(to owner: AppUser) throws(HostError) {
        try freezing.delegate(to: owner)
    }

    /// Removes the cgroup (once empty). Killing the processes first is the caller's part.
    public func remove() throws(HostError) {
        guard let cgroup = freezing.cgroup else { return }
        thawNow()
        // Taken back from a delegated owner first: removing the groups it made needs write
        // access to its folders, which the host then has as their owner (no CAP_DAC_OVERRIDE).
        for folder in cgroup.folders() {
            chown(folder, geteuid(), getegid())
            chmod(folder, 0o755)
        }
        for folder in cgroup.folders().reversed() {  // the app's own groups first, deepest first
            guard rmdir(folder) == 0 || errno == ENOENT else { throw ProcFS.failure("cannot remove \(cgroup.path)") }
        }
        if let pidsPath, rmdir(pidsPath) != 0, errno != ENOENT { throw ProcFS.failure("cannot remove \(pidsPath)") }
    }

    /// SIGSTOP to every process, again for any that appear meanwhile, until all are stopped
    /// (the signal freezer, and a v1 freezer stuck in FREEZING).
    func stopWithSignals(until deadline: ContinuousClock.Instant) async throws(HostError) {
        var running: [pid_t] = []
        let stopped = await KernelWait.until(deadline) {
            let members = processes()
            running = members.filter { !ProcFS.isHeld($0, among: members) }
            state.withLock { $0.stopped = Array(Set($0.stopped).union(members)) }
            for pid in running { kill(pid, SIGSTOP) }
            return running.isEmpty
        }
        guard !stopped else { return }
        // Described before they are continued (a SIGCONT would wake them, and be pending).
        let states = running.prefix(5).map(ProcFS.portrait(of:)).joined(separator: "; ")
        continueStopped()
        throw HostError(.freezeFailed, "\(running.count) processes of \(app) did not stop in time (\(states); D is an uninterruptible wait)")
    }

    private func continueStopped() {
        let stopped = state.withLock { state in
            defer { state.stopped = [] }
            return state.stopped
        }
        for pid in stopped { kill(pid, SIGCONT) }
    }
}
