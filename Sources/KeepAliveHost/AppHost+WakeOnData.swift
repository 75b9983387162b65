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
        let copies = try SocketWake.copies(of: sockets, in: connection.pid)
        app.forgetWakeSockets()
        app.wakeSockets = copies
        return HostReply(id: nil)
    }
}
