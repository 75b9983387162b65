import Glibc
import KeepAliveCore

/// The few BSD socket calls the mocks need, on IPv4 loopback. The only file of the mocks that
/// touches pointers (a `sockaddr` is a C struct passed by address).
///
/// It owns its descriptor and closes it exactly once. ``shutdown()`` is safe from any thread at
/// any time (it wakes a blocked `accept` or `recv`); ``close()`` belongs to the thread that
/// makes the blocking calls, once it is done with them. A descriptor number is reused by the
/// next socket or pipe the process opens, so a second `close` or a late `shutdown` would hit
/// another test's connection: the lock makes both no-ops once the socket is closed.
final class TCPSocket: Sendable {
    private let descriptor: Int32
    private let isOpen = Locked(true)

    private init(descriptor: Int32) { self.descriptor = descriptor }

    deinit { close() }

    /// A listening socket on 127.0.0.1 and a free port the kernel picks.
    static func listen() throws(MockGPSDError) -> (TCPSocket, port: Int) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw .system("socket", errno) }
        var one: Int32 = 1
        _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                Glibc.bind(descriptor, address, length) == 0 && Glibc.listen(descriptor, 16) == 0
                    && getsockname(descriptor, address, &length) == 0
            }
        }
        guard bound else {
            let code = errno
            Glibc.close(descriptor)
            throw .system("bind", code)
        }
        return (TCPSocket(descriptor: descriptor), Int(UInt16(bigEndian: address.sin_port)))
    }

    /// The next connection, or `nil` once the listener was shut down.
    func accept() -> TCPSocket? {
        while true {
            let client = Glibc.accept(descriptor, nil, nil)
            if client >= 0 { return TCPSocket(descriptor: client) }
            if errno != EINTR { return nil }
        }
    }

    /// Sends everything; `false` when the peer went away.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if sent < 0, errno == EINTR { continue }
            if sent <= 0 { return false }
            offset += sent
        }
        return true
    }

    /// Whatever arrived, up to 4 KB; empty at the end of the stream.
    func receive() -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count < 0, errno == EINTR { continue }
            return count > 0 ? Array(buffer[..<count]) : []
        }
    }

    /// Wakes any `accept` or `recv` blocked on this socket; nothing once it is closed.
    func shutdown() {
        isOpen.withLock { isOpen in
            if isOpen { _ = Glibc.shutdown(descriptor, Int32(SHUT_RDWR)) }
        }
    }

    /// Closes the descriptor, the first time only.
    func close() {
        isOpen.withLock { isOpen in
            if isOpen { Glibc.close(descriptor) }
            isOpen = false
        }
    }
}

/// The mock could not start.
public struct MockGPSDError: Error, CustomStringConvertible {
    /// What failed and why.
    public let description: String

    static func system(_ call: String, _ code: Int32) -> MockGPSDError {
        MockGPSDError(description: "mock gpsd: \(call) failed: \(String(cString: strerror(code)))")
    }
}
