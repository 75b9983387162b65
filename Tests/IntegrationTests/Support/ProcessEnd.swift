import Foundation
import Glibc

// Never Foundation's `waitUntilExit()` in a test: it runs a run loop on the calling thread, which
// in a test is one of the threads every task of the process shares (two on a 2-core machine),
// and it deadlocked both of them here (PLATFORM-NOTES.md); the whole run then waits, time limits
// included. These two wait without a run loop.

extension Process {
    /// Waits until the process has ended and Foundation has seen it end, at most `timeout`;
    /// whether it did. Polls `isRunning` between sleeps; a cancelled task (whose sleeps return
    /// at once) waits on in short pauses instead of spinning, since its caller has stopped the
    /// process or needs its end.
    @discardableResult
    func ended(within timeout: Duration = .seconds(30)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while isRunning, ContinuousClock.now < deadline {
            do { try await Task.sleep(for: .milliseconds(10)) } catch { usleep(5_000) }
        }
        return !isRunning
    }
}

/// Runs a short command to its end from code that cannot wait asynchronously (a `defer`, a
/// `deinit`): `posix_spawn` and `waitpid` on its own process, no run loop. Its exit status, or
/// -1 when it could not be started or was killed by a signal.
@discardableResult
func runToEnd(_ path: String, _ arguments: [String]) -> Int32 {
    var argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var pid: pid_t = 0
    guard posix_spawn(&pid, path, nil, nil, &argv, environ) == 0 else { return -1 }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 {
        guard errno == EINTR else { return -1 }
    }
    return status & 0x7f == 0 ? (status >> 8) & 0xff : -1
}
