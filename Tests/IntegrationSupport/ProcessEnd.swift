import CProcessControl
package import Foundation
import Glibc
import TestWaiting

// Never Foundation's `waitUntilExit()` in a test: it runs a run loop on the calling thread, which
// in a test is one of the threads every task of the process shares (two on a 2-core machine),
// and it deadlocked both of them here (PLATFORM-NOTES.md); the whole run then waits, time limits
// included. These two wait without a run loop.

extension Process {
    /// Waits until the process has ended and Foundation has seen it end, at most `timeout`;
    /// whether it did. Looks at `isRunning` every 5 ms on a thread of its own (Foundation reaps
    /// the child itself, so its pid is not ours to wait for); a cancelled task waits on too,
    /// since its caller has stopped the process or needs its end.
    @discardableResult
    package func ended(within timeout: Duration = .seconds(30)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        let process = self
        return await onOwnThread {
            while process.isRunning, ContinuousClock.now < deadline { usleep(5_000) }
            return !process.isRunning
        }
    }
}

/// Starts `arguments` (a path, then its arguments) with `posix_spawn`: no run loop, and no
/// monitor of Foundation's that would reap it. In a session of its own with `ownSession` (as
/// `setsid` starts a program), standard output to /dev/null with `quietOutput`. Its pid, for
/// `waitpid`.
package func spawn(_ arguments: [String], ownSession: Bool = false, quietOutput: Bool = false) throws -> pid_t {
    var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    if ownSession { posix_spawnattr_setflags(&attributes, 0x80) }  // POSIX_SPAWN_SETSID, not exported by Swift's Glibc
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    if quietOutput { posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0) }
    // Only its standard descriptors: nothing another test has open (a pipe, a bound socket)
    // stays open in it, as the host's own launcher does for apps.
    _ = cprocess_spawn_close_from(&actions, 3)
    var pid: pid_t = 0
    let error = posix_spawn(&pid, arguments[0], &actions, &attributes, &argv, environ)
    guard error == 0 else { throw ToolMissing("cannot start \(arguments[0]): \(String(cString: strerror(error)))") }
    return pid
}

/// Runs a short command to its end from code that cannot wait asynchronously (a `defer`, a
/// `deinit`): ``spawn(_:ownSession:quietOutput:)`` and `waitpid` on its own process, no run
/// loop. Its exit status, or -1 when it could not be started or was killed by a signal. It
/// holds its thread while the command runs: from async code, await ``run(_:_:)`` instead.
@discardableResult
package func runToEnd(_ path: String, _ arguments: [String]) -> Int32 {
    guard let pid = try? spawn([path] + arguments) else { return -1 }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 {  // blocking-ok: for a defer or deinit, a command of moments
        guard errno == EINTR else { return -1 }
    }
    return status & 0x7f == 0 ? (status >> 8) & 0xff : -1
}
