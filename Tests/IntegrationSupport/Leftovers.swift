package import Foundation
import Glibc
package import LocationKeepAlive

/// Processes a test left behind, found by what they carry, and killed.
///
/// A test that fails before it stops what it started must not leave it running: a frozen
/// app still holds the standard output it inherited from the test process, so whatever reads
/// the suite's output (`swift test`, CI) would wait for its end forever.
package enum Leftovers {
    /// The processes (but this one) whose environment holds `entry` (`NAME=value`, exactly).
    package static func processes(withEnvironment entry: String) -> [pid_t] {
        let needle = Array(entry.utf8)
        return processes { pid in
            guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/environ") else { return false }
            return data.split(separator: 0).contains { $0.elementsEqual(needle) }
        }
    }

    /// The processes (but this one) whose command line mentions `text` (a test's own file, say).
    package static func processes(mentioning text: String) -> [pid_t] {
        processes { pid in
            ((try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8)) ?? "").contains(text)
        }
    }

    /// SIGKILL, and SIGCONT for one stopped with signals. Frozen cgroup v2 processes die of it;
    /// a cgroup v1 freezer must be thawed first (``removeGroups(of:)``).
    package static func kill(_ pids: [pid_t]) {
        for pid in pids {
            Glibc.kill(pid, SIGKILL)
            Glibc.kill(pid, SIGCONT)
        }
    }

    /// Thaws and kills every group under a freezer's root, waits up to 2 s for their processes
    /// to end, and removes the groups and the root.
    package static func removeGroups(of freezer: Freezer) {
        let groups = freezer.thawLeftovers()
        for group in groups { group.signalAll(SIGKILL) }
        for _ in 0..<200 where groups.contains(where: { !$0.processes().isEmpty }) { usleep(10_000) }  // blocking-ok: a deinit's clean-up, which cannot await
        for group in groups { try? group.remove() }
        freezer.removeRoot()
    }

    private static func processes(where matches: (pid_t) -> Bool) -> [pid_t] {
        let me = getpid()
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return names.compactMap(pid_t.init).filter { $0 != me && matches($0) }
    }
}
