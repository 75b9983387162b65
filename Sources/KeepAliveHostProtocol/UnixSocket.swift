import CProcessControl
import FoundationEssentials
import Glibc
import KeepAliveCore

/// A Unix stream socket: the C calls of the control channel, in one place.
package final class UnixSocket: Sendable {
    package let descriptor: Int32
    /// Whole lines from several threads never interleave. It counts the writes: a `Locked<Void>`
    /// made ThreadSanitizer report a race on the zero-sized value (at the object's address).
    private let writes = Locked(0)

    private init(descriptor: Int32) { self.descriptor = descriptor }

    deinit { close(descriptor) }

    /// The process on the other end, from `SO_PEERCRED`.
    package struct Peer: Sendable, Hashable {
        package let pid: Int32
        package let uid: UInt32
        package let gid: UInt32

        package init(pid: Int32, uid: UInt32, gid: UInt32) {
            (self.pid, self.uid, self.gid) = (pid, uid, gid)
        }
    }

    /// Listens on `path` with `mode`, given to `group` when one is named (a stale socket file
    /// nobody answers on is replaced).
    ///
    /// - Throws: ``HostError/Code/socketInUse`` when another process answers there.
    package static func listen(at path: String, mode: UInt32, group: UInt32? = nil) throws(HostError) -> UnixSocket {
        if access(path, F_OK) == 0 {
            if (try? connect(to: path)) != nil {
                throw HostError(
                    .socketInUse,
                    "another host answers on \(path): stop it, or give this one --socket PATH"
                )
            }
            unlink(path)
        }
        let socket = try make()
        try withAddress(path) { address, length throws(HostError) in
            guard bind(socket.descriptor, address, length) == 0 else {
                throw HostError.system("cannot bind \(path)", code: .socketFailed)
            }
        }
        if let group, chown(path, uid_t.max, group) != 0 {  // -1: the owner stays
            throw HostError.system("cannot give \(path) to group \(group)", code: .socketFailed)
        }
        chmod(path, mode)
        guard Glibc.listen(socket.descriptor, 64) == 0 else {
            throw HostError.system("cannot listen on \(path)", code: .socketFailed)
        }
        return socket
    }

    /// Connects to a listening socket.
    package static func connect(to path: String) throws(HostError) -> UnixSocket {
        let socket = try make()
        try withAddress(path) { address, length throws(HostError) in
            guard Glibc.connect(socket.descriptor, address, length) == 0 else {
                throw HostError.system("no host answers on \(path)", code: .hostUnreachable)
            }
        }
        return socket
    }

    /// The next waiting connection's descriptor (close-on-exec from the start: an app spawned
    /// meanwhile never inherits a client), or `nil` when none waits (the socket is non-blocking)
    /// or the socket is shut down.
    package func acceptNow() -> Int32? {
        while true {
            let client = cprocess_accept(descriptor)
            if client >= 0 { return client }
            if errno == ECONNABORTED { continue }
            return nil
        }
    }

    /// The credentials of the process connected on `descriptor`, from `SO_PEERCRED`.
    package static func peer(of descriptor: Int32) -> Peer? {
        // struct ucred is { pid_t pid; uid_t uid; gid_t gid; }: three 32-bit fields.
        var fields = [Int32](repeating: 0, count: 3)
        var length = socklen_t(MemoryLayout<Int32>.size * 3)
        let result = fields.withUnsafeMutableBytes {
            getsockopt(descriptor, SOL_SOCKET, SO_PEERCRED, $0.baseAddress, &length)
        }
        guard result == 0 else { return nil }
        return Peer(pid: fields[0], uid: UInt32(bitPattern: fields[1]), gid: UInt32(bitPattern: fields[2]))
    }

    /// Writes all of `bytes`; false once the other end is gone.
    @discardableResult
    package func write(_ bytes: [UInt8]) -> Bool {
        writes.withLock { count in
            count += 1
            var offset = 0
            while offset < bytes.count {
                let written = SystemCall.retryingOnInterrupt {
                    bytes.withUnsafeBytes { send(descriptor, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
                }
                guard written > 0 else { return false }
                offset += written
            }
            return true
        }
    }

    /// Reads lines (without the newline) until the end of the stream, a read error, or a line
    /// longer than `limit` (handed over whole, so the caller can refuse it).
    package func readLines(limit: Int, _ handle: ([UInt8]) -> Bool) {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = SystemCall.retryingOnInterrupt { chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) } }
            guard count > 0 else { return }
            buffer.append(contentsOf: chunk[0..<count])
            while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(buffer[..<newline])
                buffer.removeSubrange(...newline)
                guard handle(line) else { return }
            }
            if buffer.count > limit {
                _ = handle(buffer)
                return
            }
        }
    }

    /// Stops reads and accepts in progress (another thread is blocked in them).
    package func shutDown() { Glibc.shutdown(descriptor, Int32(SHUT_RDWR)) }

    private static func make() throws(HostError) -> UnixSocket {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw HostError.system("cannot make a socket", code: .socketFailed) }
        return UnixSocket(descriptor: descriptor)
    }

    private static func withAddress(
        _ path: String,
        _ body: (UnsafePointer<sockaddr>, socklen_t) throws(HostError) -> Void
    ) throws(HostError) {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else {
            throw HostError(
                .socketFailed,
                "socket path too long (\(bytes.count) bytes, at most \(capacity - 1)): \(path)"
            )
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        var result: Result<Void, HostError> = .success(())
        withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                do throws(HostError) {
                    try body(address, socklen_t(MemoryLayout<sockaddr_un>.size))
                } catch {
                    result = .failure(error)
                }
            }
        }
        try result.get()
    }
}
