import Glibc

/// Whether a TCP port can be listened on, on 127.0.0.1 and on ::1 (a server may take either).
enum LoopbackPort {
    static func isFree(_ port: Int) -> Bool {
        canBind(port, family: AF_INET) && canBind(port, family: AF_INET6)
    }

    private static func canBind(_ port: Int, family: Int32) -> Bool {
        // Close-on-exec: bound for a moment, it must not stay bound in a process another test
        // spawns meanwhile, which would hold the port for its whole life.
        let socket = Glibc.socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { return false }
        defer { close(socket) }
        let bound: Int32
        if family == AF_INET {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = in_addr_t(0x7f00_0001).bigEndian
            bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        } else {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = in_port_t(UInt16(port).bigEndian)
            address.sin6_addr = in6addr_loopback
            bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        }
        return bound == 0
    }
}
