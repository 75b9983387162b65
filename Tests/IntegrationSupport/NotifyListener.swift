import Foundation
import Glibc
import LocationKeepAlive
import TestWaiting

/// A socket standing in for systemd's `$NOTIFY_SOCKET`: every datagram a service sends, with
/// when it came, as systemd receives them (sd_notify(3)).
package final class NotifyListener: Sendable {
    package struct Message: Sendable {
        package let at: ContinuousClock.Instant
        package let lines: [String]
    }

    package let path: String
    private let descriptor: Int32
    private let received = Locked<[Message]>([])
    private let stopped = Locked(false)

    package init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("notify-\(UUID().uuidString).sock").path
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        descriptor = fd
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard fd >= 0, bound == 0 else { throw POSIXError(.EADDRNOTAVAIL) }
        var wait = timeval(tv_sec: 0, tv_usec: 100_000)  // to look at `stopped` ten times a second
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        let (received, stopped) = (received, stopped)
        Thread.detachNewThread {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !stopped.withLock({ $0 }) {
                let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { continue }
                let text = String(decoding: buffer[0..<count], as: UTF8.self)
                let message = Message(at: .now, lines: text.split(separator: "\n").map(String.init))
                received.withLock { $0.append(message) }
            }
        }
    }

    package var messages: [Message] { received.withLock { $0 } }

    /// Waits until a message has a line for which `match` holds; returns it, or nil after `timeout`.
    package func wait(for timeout: Duration, _ match: @escaping @Sendable (String) -> Bool) async -> Message? {
        let first: @Sendable () -> Message? = { [self] in messages.first(where: { $0.lines.contains(where: match) }) }
        guard (try? await holds(within: timeout) { first() != nil }) == true else { return nil }
        return first()
    }

    /// Stops the reader thread and removes the socket file (the descriptor stays open: the
    /// thread may still be in its last `recv`; the process closes it at exit).
    package func close() {
        stopped.withLock { $0 = true }
        unlink(path)
    }
}
