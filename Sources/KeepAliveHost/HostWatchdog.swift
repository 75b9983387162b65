public import FoundationEssentials
import CProcessControl
import Glibc
import KeepAliveCore
import KeepAliveHostProtocol

/// Never an app left frozen by a host that died: a small process of its own, started by the
/// host with a pipe as its standard input. When the host ends in any way (even `kill -9`),
/// the kernel closes the pipe; the watchdog then thaws every group under the host's cgroup
/// folder and continues every process listed in the host's stopped-process file (signals).
public enum HostWatchdog {
    /// Starts `arguments` as the watchdog, in a session of its own (a Ctrl-C to the host's
    /// terminal does not reach it).
    ///
    /// - Returns: the pipe's write end, which the host keeps open for its whole life.
    static func start(_ arguments: [String]) throws(HostError) -> Int32 {
        var ends: [Int32] = [0, 0]
        // Apps must not inherit either end (the host's death must close the last write end):
        // close-on-exec from the start, so that an app spawned meanwhile gets neither.
        guard cprocess_pipe(&ends, 0) == 0 else { throw ProcFS.failure("cannot make the watchdog's pipe", code: .launchFailed) }
        defer { close(ends[0]) }
        do {
            _ = try AppLauncher.spawn(arguments, standardInput: ends[0])
        } catch {
            close(ends[1])
            throw error
        }
        return ends[1]
    }

    /// The watchdog's own work: waits for the host to end, then thaws what it left.
    ///
    /// - Returns: what it thawed, in words.
    public static func watch(freezer kind: FreezerKind?, name: String, stoppedFile: URL) -> [String] {
        let stoppedFile = stoppedFile.path
        var byte: UInt8 = 0
        while SystemCall.retryingOnInterrupt({ read(0, &byte, 1) }) > 0 {}  // until the host's end closes
        var done: [String] = []
        // Only a root left there: made again here, it would be there a moment after its host had
        // removed it (a test saw the groups of a host that had stopped cleanly).
        if kind != .signal, let freezer = try? Freezer.choose(kind, name: name, creating: false), freezer.kind != .signal {
            for group in freezer.thawLeftovers() { done.append("thawed \(group.path ?? group.app)") }
            freezer.removeRoot()  // only if empty
        }
        let pids = (KernelFile.read(stoppedFile) ?? "").split(separator: "\n").compactMap { pid_t($0) }
        for pid in pids where kill(pid, SIGCONT) == 0 { done.append("continued \(pid)") }
        unlink(stoppedFile)
        return done
    }

    /// Records the processes stopped with signals now (written whole, then renamed; none: the
    /// file removed).
    static func record(_ pids: [Int32], in path: String) {
        guard !pids.isEmpty else {
            unlink(path)
            return
        }
        let temporary = path + ".new"
        let text = pids.map(String.init).joined(separator: "\n")
        guard (try? ProcFS.create(temporary, contents: text)) != nil else { return }
        rename(temporary, path)
    }
}
