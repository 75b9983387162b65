import FoundationEssentials
import Glibc
import KeepAliveCore

/// gpsd's control requests on a connection of their own: the devices gpsd has, and bytes
/// written to one of them (`?DEVICE={"path":…,"hexdata":…}`, the write `ubxtool` and `gpsctl`
/// make), so that gpsd stays the device's one opener.
///
/// Blocking: called on a queue of the caller's (``UBXThroughGPSD``), never on the concurrency
/// pool. gpsd refuses the write when started read-only (`-b`), and answers `Type of … is
/// unknown` before it has identified the receiver.
struct GPSDControl: Sendable {
    var host: String
    var port: Int
    /// Each read or write gives up after this.
    var timeout: Duration = .seconds(3)

    /// One device as gpsd lists it.
    struct Device: Sendable, Hashable, Decodable {
        var path: String
        /// gpsd's driver for it (`u-blox`, `NMEA0183`, …), once identified.
        var driver: String?
    }

    private struct Reply: Decodable {
        var `class`: String
        var devices: [Device]?
        var message: String?
    }

    /// The devices gpsd has.
    func devices() throws(ReceiverPowerError) -> [Device] {
        let reply = try request("?DEVICES;", answeredBy: ["DEVICES"])
        return reply.devices ?? []
    }

    /// Writes `bytes` to the device at `path`, through gpsd.
    func write(_ bytes: [UInt8], to path: String) throws(ReceiverPowerError) {
        let quoted = (try? JSONEncoder().encode(path)).map { String(decoding: $0, as: UTF8.self) } ?? "\"\""
        _ = try request("?DEVICE={\"path\":\(quoted),\"hexdata\":\"\(UBXFrame.hex(bytes))\"}", answeredBy: ["DEVICE"])
    }

    /// Sends `command` and reads lines until one of the classes `answeredBy` (or an ERROR) comes.
    private func request(_ command: String, answeredBy classes: Set<String>) throws(ReceiverPowerError) -> Reply {
        let socket = try connect()
        defer { close(socket) }
        let line = Array((command + "\n").utf8)
        guard line.withUnsafeBytes({ send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == line.count else {
            throw ReceiverPowerError("gpsd at \(host):\(port) took no request: \(String(cString: strerror(errno)))")
        }
        var pending: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4_096)
        while true {
            while let end = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let text = Array(pending[..<end])
                pending.removeFirst(end + 1)
                guard let reply = try? JSONDecoder().decode(Reply.self, from: Data(text)) else { continue }
                if reply.class == "ERROR" {
                    throw ReceiverPowerError("gpsd refused `\(command)`: \(reply.message ?? "no reason given")")
                }
                if classes.contains(reply.class) { return reply }
            }
            let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            guard count > 0 else {
                throw ReceiverPowerError("gpsd at \(host):\(port) did not answer `\(command)` within \(timeout.secondsText)")
            }
            pending += chunk[..<count]
            guard pending.count < 1 << 20 else { throw ReceiverPowerError("gpsd's answer to `\(command)` ran past 1 MB") }
        }
    }

    private func connect() throws(ReceiverPowerError) -> Int32 {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, "\(port)", &hints, &list) == 0, let first = list else {
            throw ReceiverPowerError("cannot resolve gpsd's host \(host)")
        }
        defer { freeaddrinfo(list) }
        var seconds = timeval(tv_sec: Int(timeout.components.seconds), tv_usec: 0)
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let address = entry {
            let socket = Glibc.socket(address.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            if socket >= 0 {
                setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &seconds, socklen_t(MemoryLayout<timeval>.size))
                setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &seconds, socklen_t(MemoryLayout<timeval>.size))
                if Glibc.connect(socket, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 { return socket }
                close(socket)
            }
            entry = address.pointee.ai_next
        }
        throw ReceiverPowerError("cannot connect to gpsd at \(host):\(port): is it running? (`systemctl status gpsd`)")
    }
}
