import CProcessControl
package import Glibc

/// How a child process ended.
package enum ProcessExit: Sendable, Equatable {
    /// It exited with this status.
    case exited(Int32)
    /// A signal ended it.
    case signaled(Int32)

    init(status: Int32) {
        self = status & 0x7f == 0 ? .exited((status >> 8) & 0xff) : .signaled(status & 0x7f)
    }
}

/// Waits for the child `pid` to end and reaps it: the kernel tells the end (a pidfd, polled on a
/// thread of its own), nothing is polled on the concurrency pool. `nil` when it is still running
/// after `timeout` (scaled, ``TestTime/bound(_:)``); it is then left running and unreaped.
/// For a child this process started with `posix_spawn` or `fork`, not one Foundation's `Process`
/// reaps itself.
package func processExit(of pid: pid_t, within timeout: Duration = TestTime.patience) async -> ProcessExit? {
    let milliseconds = Int32(clamping: TestTime.bound(timeout).components.seconds * 1_000)
    return await onOwnThread {
        let descriptor = cprocess_pidfd_open(pid)
        if descriptor >= 0 {
            defer { close(descriptor) }
            var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            while poll(&ready, 1, milliseconds) < 0, errno == EINTR {}
        }
        var status: Int32 = 0
        let options = descriptor >= 0 ? WNOHANG : 0  // no pidfd (a kernel before 5.3): wait as waitpid does
        var reaped: pid_t
        repeat { reaped = waitpid(pid, &status, options) } while reaped < 0 && errno == EINTR
        return reaped == pid ? ProcessExit(status: status) : nil
    }
}

/// Sends `signal` to the child `pid` and reaps it on a thread of its own, without waiting: for a
/// `defer` or a `deinit`, which cannot await (a child left unreaped stays a zombie until the
/// test process ends).
package func signalAndReap(_ pid: pid_t, _ signal: Int32 = SIGKILL) {
    kill(pid, signal)
    OwnThread.start {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
    }
}
