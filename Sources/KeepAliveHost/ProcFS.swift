import FoundationEssentials
import Glibc
import KeepAliveCore
import KeepAliveHostProtocol

/// Small reads and writes of `/proc` and cgroup files: one value a file, no buffering.
enum ProcFS {
    /// Writes `text` to a kernel file in one `write`; throws the errno in words.
    static func write(_ text: String, to path: String) throws(HostError) {
        let descriptor = open(path, O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure("cannot open \(path)") }
        defer { close(descriptor) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        guard written == bytes.count else { throw failure("cannot write '\(text)' to \(path)") }
    }

    /// Creates (or truncates) a regular file with `contents`, mode 0600.
    static func create(_ path: String, contents: String) throws(HostError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw failure("cannot create \(path)") }
        defer { close(descriptor) }
        let bytes = Array(contents.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        guard written == bytes.count else { throw failure("cannot write \(path)") }
    }

    /// The calling thread's errno as a ``HostError`` with `context`.
    static func failure(_ context: String, code: HostError.Code = .freezeFailed) -> HostError {
        HostError.system(context, code: code)
    }

    /// Every process id on the machine.
    static func allProcesses() -> [pid_t] {
        guard let directory = opendir("/proc") else { return [] }
        defer { closedir(directory) }
        var pids: [pid_t] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if let pid = pid_t(name) { pids.append(pid) }
        }
        return pids
    }

    /// Fields of `/proc/PID/stat` after the command name: state is [0], ppid [1], session [3],
    /// utime [11], stime [12] (in clock ticks).
    static func stat(_ pid: pid_t) -> [Substring]? {
        guard let text = KernelFile.read("/proc/\(pid)/stat"), let close = text.lastIndex(of: ")") else { return nil }
        return text[text.index(after: close)...].split(separator: " ")
    }

    /// When the process started, in clock ticks since boot: with its pid, it names one process
    /// (a pid is used again; a pid and its start time are not).
    static func startTime(of pid: pid_t) -> UInt64? { stat(pid).flatMap { $0.count > 19 ? UInt64($0[19]) : nil } }

    /// Whether `pid` still names the process that started at `start` (its ``startTime(of:)``
    /// then): false once that process is gone, its pid free or another process's.
    static func isProcess(_ pid: pid_t, startedAt start: UInt64?) -> Bool {
        start != nil && startTime(of: pid) == start
    }

    /// The process's session id.
    static func session(of pid: pid_t) -> pid_t? { stat(pid).flatMap { $0.count > 3 ? pid_t($0[3]) : nil } }

    /// A process that would not stop, in words, for the error that says so: its command, state,
    /// where in the kernel it waits (`wchan`), its parent, its start, and its signals pending,
    /// blocked and ignored (`/proc/PID/status`, hexadecimal masks: SIGSTOP is 0x10000).
    static func portrait(of pid: pid_t) -> String {
        let command = KernelFile.read("/proc/\(pid)/comm")?.trimmed ?? "?"
        let fields = stat(pid)
        let wchan = KernelFile.read("/proc/\(pid)/wchan").map { $0.isEmpty ? "-" : $0 } ?? "?"
        let status = (KernelFile.read("/proc/\(pid)/status") ?? "").split(separator: "\n")
        let signals = ["SigPnd", "ShdPnd", "SigBlk", "SigIgn", "TracerPid"].compactMap { key in
            status.first { $0.hasPrefix("\(key):") }.map { "\(key) \($0.dropFirst(key.count + 1).trimmed)" }
        }
        let state = fields?.first.map(String.init) ?? "?"
        let parent = fields.flatMap { $0.count > 1 ? String($0[1]) : nil } ?? "?"
        let start = startTime(of: pid).map(String.init) ?? "?"
        return (["\(pid) (\(command)) in state \(state)", "wchan \(wchan)", "parent \(parent)", "started at tick \(start)"] + signals)
            .joined(separator: ", ")
    }

    /// Whether `pid` is held: stopped (`T`, `t`), gone, or waiting in `vfork` for a child that
    /// is stopped. A shell's (dash's) or `posix_spawn`'s parent waits in the kernel,
    /// uninterruptibly, until its child has exec'd or ended, so with that child stopped before
    /// its exec it cannot run either, and the SIGSTOP sent to it takes effect only once the
    /// child goes on. `among`: the processes to look for the child in.
    static func isHeld(_ pid: pid_t, among processes: [pid_t]) -> Bool {
        guard let state = state(of: pid) else { return true }
        if state == "T" || state == "t" { return true }
        guard state == "D", let wchan = KernelFile.read("/proc/\(pid)/wchan"), wchan.contains("clone") || wchan.contains("fork")
        else { return false }
        return processes.contains { child in
            guard let fields = stat(child), fields.count > 1, pid_t(fields[1]) == pid else { return false }
            return fields[0] == "T" || fields[0] == "t"
        }
    }

    /// The process's state letter (`R`, `S`, `T` stopped, `Z` zombie...).
    static func state(of pid: pid_t) -> Character? { stat(pid)?.first?.first }

    /// User plus system CPU time of one process.
    static func cpuTime(of pid: pid_t) -> Duration? {
        guard let fields = stat(pid), fields.count > 12, let user = Int64(fields[11]), let system = Int64(fields[12])
        else { return nil }
        return .microseconds((user + system) * 1_000_000 / Int64(sysconf(Int32(_SC_CLK_TCK))))
    }

    /// The cgroup path of a process in the v2 hierarchy (`0::/path`), or in a v1 hierarchy with
    /// `controller` among its controllers.
    static func cgroup(of pid: pid_t, controller: String?) -> String? {
        guard let text = KernelFile.read("/proc/\(pid)/cgroup") else { return nil }
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3 else { continue }
            if let controller {
                if parts[1].split(separator: ",").contains(Substring(controller)) { return String(parts[2]) }
            } else if parts[0] == "0" {
                return String(parts[2])
            }
        }
        return nil
    }

    /// Where a filesystem of `type` is mounted (from `/proc/self/mountinfo`), with its options.
    static func mounts(ofType type: String) -> [(path: String, options: String)] {
        guard let text = KernelFile.read("/proc/self/mountinfo") else { return [] }
        return text.split(separator: "\n").compactMap { line in
            let halves = line.split(separator: " - ", maxSplits: 1)
            guard halves.count == 2 else { return nil }
            let before = halves[0].split(separator: " ")
            let after = halves[1].split(separator: " ")
            guard before.count > 4, after.count > 2, after[0] == type else { return nil }
            return (String(before[4]), String(after[2]))
        }
    }
}

extension ProcFS {
    /// The real user id a process runs as (`Uid:` in `/proc/PID/status`).
    static func owner(of pid: pid_t) -> UInt32? {
        guard let text = KernelFile.read("/proc/\(pid)/status") else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("Uid:") {
            return line.split(whereSeparator: { $0 == "\t" || $0 == " " }).dropFirst().first.flatMap { UInt32($0) }
        }
        return nil
    }

    /// The groups a process is in: its effective group and its supplementary ones (`Gid:`, `Groups:`).
    static func groups(of pid: pid_t) -> Set<UInt32> {
        guard let text = KernelFile.read("/proc/\(pid)/status") else { return [] }
        var groups = Set<UInt32>()
        for line in text.split(separator: "\n") where line.hasPrefix("Groups:") || line.hasPrefix("Gid:") {
            let values = line.split(whereSeparator: { $0 == "\t" || $0 == " " }).dropFirst().compactMap { UInt32($0) }
            groups.formUnion(line.hasPrefix("Gid:") ? Array(values.prefix(2)) : values)
        }
        return groups
    }
}
