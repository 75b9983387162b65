import Glibc

/// The one home of the loops around system calls: a call a signal interrupted before it did
/// anything (`EINTR`) is made again, as swift-system's `retryOnInterrupt` does.
package enum SystemCall {
    /// `call()`, made again while it fails with `EINTR`; any other result (a count, a
    /// descriptor, `-1` with another `errno`) is returned as it came.
    @inline(__always)
    package static func retryingOnInterrupt<Result: BinaryInteger>(_ call: () -> Result) -> Result {
        while true {
            let result = call()
            if result >= 0 || errno != EINTR { return result }
        }
    }
}

/// How a child process ended, from the status `waitpid` gives: the one reading of it.
package struct ExitStatus: Sendable, Hashable, CustomStringConvertible {
    /// The raw status `waitpid` filled in.
    package let raw: Int32

    package init(waitStatus raw: Int32) { self.raw = raw }

    /// The signal that ended it, or `nil` when it exited.
    package var signal: Int32? { raw & 0x7f == 0 ? nil : raw & 0x7f }

    /// The status a shell would give: the exit code, or 128 plus the signal.
    package var code: Int32 { signal.map { 128 + $0 } ?? (raw >> 8) & 0xff }

    package var description: String {
        signal.map { "killed by signal \($0)" } ?? "exit code \(code)"
    }

    /// Reaps `pid` if it has ended (`WNOHANG`), or waits for it: its status, or `nil` when it
    /// has not ended yet (or is not this process's child).
    package static func reap(_ pid: Int32, waiting: Bool = false) -> ExitStatus? {
        var status: Int32 = 0
        let reaped = SystemCall.retryingOnInterrupt { waitpid(pid, &status, waiting ? 0 : WNOHANG) }
        return reaped == pid ? ExitStatus(waitStatus: status) : nil
    }
}
