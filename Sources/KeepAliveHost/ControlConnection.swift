import FoundationEssentials
import Glibc
import KeepAliveCore
import KeepAliveHostProtocol

/// One client of the host's control socket, and who it is.
public final class ControlConnection: Sendable {
    let channel: ControlChannel
    let peer: UnixSocket.Peer
    let number: Int
    /// Came in on the apps' socket: it may say hello and report, nothing else.
    let isApp: Bool

    init(channel: ControlChannel, peer: UnixSocket.Peer, number: Int, isApp: Bool) {
        self.channel = channel
        self.peer = peer
        self.number = number
        self.isApp = isApp
    }

    /// The caller's process id, as the kernel saw it connect.
    public var pid: Int32 { peer.pid }

    func send(_ reply: HostReply) { channel.send(HostProtocol.encode(reply)) }
    func send(_ notice: HostNotice) { channel.send(HostProtocol.encode(notice)) }
    func close() { channel.close() }

    /// After a refusal: the reply is read to its end, then EOF.
    func closeForWriting() { channel.closeForWriting() }

    /// It said hello for an app: an app's connection is never closed for being idle.
    func identifyAsApp() { channel.identifyAsApp() }
}
