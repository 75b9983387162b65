import CSystemdNotify
public import FoundationEssentials
import Glibc

/// Tells systemd how a `Type=notify` service is doing, through `$NOTIFY_SOCKET`: `READY=1`
/// once, `STATUS=` lines, `WATCHDOG=1` pings (sd_notify(3)'s datagram protocol, no libsystemd).
///
/// Not under systemd (no `$NOTIFY_SOCKET`), every call does nothing and returns `true`.
public struct SystemdNotifier: Sendable {
    /// Where the notifications go: a socket path, or `@name` in the abstract namespace.
    public let socket: String?
    /// The unit's `WatchdogSec=`, when systemd watches this process (`$WATCHDOG_USEC`, and
    /// `$WATCHDOG_PID` naming this process when set): ping at least twice as often.
    public let watchdogInterval: Duration?

    /// Reads `$NOTIFY_SOCKET` and the watchdog settings from `environment`; without a socket every call does nothing.
    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        socket = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
        let forThisProcess = environment["WATCHDOG_PID"].map { Int32($0) == getpid() } ?? true
        if forThisProcess, let micros = environment["WATCHDOG_USEC"].flatMap(Int64.init), micros > 0 {
            watchdogInterval = .microseconds(micros)
        } else {
            watchdogInterval = nil
        }
    }

    /// Sends `lines` as one notification.
    ///
    /// - Returns: `false` when the socket refused it (systemd gone, a wrong path); the service
    ///   goes on either way.
    @discardableResult
    public func notify(_ lines: [String]) -> Bool {
        guard let socket else { return true }
        // A status is one line: newlines inside it would start new assignments.
        let text = lines.map { $0.replacing("\n", with: " ") }.joined(separator: "\n")
        return csd_notify(socket, text) == 0
    }

    /// `READY=1` with what the service is doing.
    @discardableResult
    public func ready(status: String) -> Bool { notify(["READY=1", "STATUS=\(status)"]) }

    /// A `STATUS=` line: what `systemctl status` shows.
    @discardableResult
    public func status(_ text: String) -> Bool { notify(["STATUS=\(text)"]) }

    /// `WATCHDOG=1`: the service's main loop is alive.
    @discardableResult
    public func watchdog() -> Bool { notify(["WATCHDOG=1"]) }

    /// `STOPPING=1` with the reason, at the start of a graceful stop.
    @discardableResult
    public func stopping(status: String) -> Bool { notify(["STOPPING=1", "STATUS=\(status)"]) }
}
