import Dispatch
import Glibc
import KeepAliveCore
import KeepAliveHostProtocol

/// What the host does to an app's processes where it blocks (a walk of `/proc`, a spawn, a
/// wait), done on the host's queue for processes and awaited, never on its executor.
extension AppProcessGroup {
    /// Sends `signal` to every process of the group, to `leader` and to every process that
    /// left the group.
    func signalEverything(leader: Int32?, _ signal: Int32, on processes: DispatchQueue) async {
        await processes.awaiting {
            self.signalAll(signal)
            if let leader { kill(leader, signal) }
            for escape in self.escapes() { kill(escape.pid, signal) }
        }
    }

    /// Its processes outside the group, each with where it went.
    func escapes(on processes: DispatchQueue) async -> [Escape] {
        await processes.awaiting { self.escapes() }
    }

    /// Kills its processes outside the group until none is left: one may fork between the
    /// reading and the signal.
    func killEscapes(on processes: DispatchQueue) async {
        await processes.awaiting {
            var escapes = self.escapes()
            for _ in 0..<10 where !escapes.isEmpty {
                for escape in escapes { kill(escape.pid, SIGKILL) }
                escapes = self.escapes()
            }
        }
    }

    /// How a first process's joining of its group ended.
    enum Joining {
        case joined
        /// It ended first (reaped, with its status).
        case ended(ExitStatus)
        /// It was not in the group in time (killed).
        case late
    }

    /// Waits until process `pid` has joined the group (the launcher's shell does it first
    /// thing, then becomes the app), on the kernel's word that the group changed, at most
    /// `bound`: so that from the launch's reply on the app is in its group.
    func waitUntilJoined(by pid: Int32, within bound: Duration, isolation: isolated (any Actor)? = #isolation) async -> Joining {
        guard path != nil else { return .joined }  // signals: the session is made by the spawn itself
        var ended: ExitStatus?
        let joined = await KernelWait.until(.now + bound, events: freezing.eventsFolder) {
            if contains(pid) || AppLauncher.hasJoined(pid) { return true }
            ended = ExitStatus.reap(pid)
            return ended != nil
        }
        if let ended { return .ended(ended) }
        guard joined else {
            kill(pid, SIGKILL)
            return .late
        }
        return .joined
    }
}
