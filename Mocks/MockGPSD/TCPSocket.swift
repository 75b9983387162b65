import Glibc

/// The few BSD socket calls the mock gpsd needs, on IPv4 loopback. The only file of the mocks
/// that touches pointers (a `sockaddr` is a C struct passed by address).
struct TCPSocket: Sendable {
    let descriptor: Int32

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

    /// Wakes any `accept` or `recv` blocked on this socket, then closes it.
    func shutdownAndClose() {
        _ = Glibc.shutdown(descriptor, Int32(SHUT_RDWR))
        Glibc.close(descriptor)
    }

    func shutdown() { _ = Glibc.shutdown(descriptor, Int32(SHUT_RDWR)) }

    func close() { Glibc.close(descriptor) }
}

/// The mock could not start.
public struct MockGPSDError: Error, CustomStringConvertible {
    public let description: String

    static func system(_ call: String, _ code: Int32) -> MockGPSDError {
        MockGPSDError(description: "mock gpsd: \(call) failed: \(String(cString: strerror(code)))")
    }
}
