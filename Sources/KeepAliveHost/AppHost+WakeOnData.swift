import CProcessControl
import Glibc
import KeepAliveCore
import KeepAliveHostProtocol

/// The host's push: an app names sockets of its own (`wake-on-data`), the host keeps copies
/// (pidfd_getfd), and while the app is frozen the first data on one wakes it for the event
/// budget, as a location event does. The app reads the data itself once thawed.
extension AppHost {
    func wakeOnData(_ sockets: [Int32], by app: HostedApp, from connection: ControlConnection) throws(HostError) -> HostReply {
        guard sockets.count <= HostProtocol.maximumWakeSockets else {
            throw HostError(.badRequest, "wake-on-data takes at most \(HostProtocol.maximumWakeSockets) sockets, not \(sockets.count)")
        }
        var copies: [Int32] = []
        for socket in sockets {
            let copy = socket >= 0 ? cprocess_take_descriptor(connection.pid, socket) : -1
            guard copy >= 0 else {
                let reason = socket < 0 ? "not a descriptor" : String(cString: strerror(errno))
                for taken in copies { close(taken) }
                throw HostError(.badRequest, "wake-on-data: cannot take descriptor \(socket) of process \(connection.pid) (\(reason); pidfd_getfd needs Linux 5.6)")
            }
            var status = stat()
            guard fstat(copy, &status) == 0, status.st_mode & S_IFMT == S_IFSOCK else {
                close(copy)
                for taken in copies { close(taken) }
                throw HostError(.badRequest, "wake-on-data: descriptor \(socket) is not a socket")
            }
            copies.append(copy)
        }
        app.forgetWakeSockets()
        app.wakeSockets = copies
        return HostReply(id: nil)
    }

    /// Data came on one of a frozen app's sockets: woken for the event budget, as its machine
    /// decides (not if it was thawed or frozen again since, nor beyond its budget for pushes).
    func dataArrived(for id: String, generation: Int) {
        guard let app = apps[id] else { return }
        handle(.dataArrived(generation: generation), for: app)
    }
}

extension HostedApp {
    /// Stops watching the app's sockets and closes the host's copies.
    func forgetWakeSockets() {
        socketWake?.stop()
        socketWake = nil
        for socket in wakeSockets { close(socket) }
        wakeSockets = []
    }
}
