import Glibc

/// A pseudo-terminal: the simulator holds its master, gpsd opens its slave as a serial device.
/// The simulator keeps the slave open too, so that the terminal lives while gpsd has it closed,
/// and writes without blocking: what gpsd does not read while the device is closed is dropped,
/// as a serial line drops it.
struct PseudoTerminal {
    let master: Int32
    let path: String
    private let slave: Int32

    /// TIOCSPTLCK and TIOCGPTN (`_IOW('T', 0x31, int)`, `_IOR('T', 0x30, unsigned)` with the
    /// generic ioctl encoding of x86-64 and arm64), which the Glibc module does not export.
    private static let setLock: UInt = 0x4004_5431
    private static let number: UInt = 0x8004_5430

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    init() throws {
        // posix_openpt, unlockpt and ptsname, as glibc does them: the multiplexer, its lock, its number.
        master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
        var unlock: Int32 = 0
        var number: UInt32 = 0
        guard master >= 0, ioctl(master, Self.setLock, &unlock) == 0, ioctl(master, Self.number, &number) == 0 else {
            throw Failure(description: "cannot open a pseudo-terminal (/dev/ptmx): \(Self.reason())")
        }
        path = "/dev/pts/\(number)"
        slave = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard slave >= 0 else { throw Failure(description: "cannot open \(path): \(Self.reason())") }
        // As udev makes a serial device: group dialout, read and write for it. gpsd started
        // without -n (as Debian starts it) opens a device for its first watcher, after dropping
        // root for its own user in that group.
        if let dialout = getgrnam("dialout") { _ = fchown(slave, uid_t.max, dialout.pointee.gr_gid) }
        _ = fchmod(slave, 0o660)
        var settings = termios()
        tcgetattr(slave, &settings)
        cfmakeraw(&settings)
        cfsetspeed(&settings, speed_t(B9600))
        tcsetattr(slave, TCSANOW, &settings)
        _ = fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK)
    }

    static func reason() -> String { String(decoding: Array(UnsafeBufferPointer(start: strerror(errno), count: strlen(strerror(errno)))).map { UInt8(bitPattern: $0) }, as: UTF8.self) }

    /// Writes `bytes`, dropping what the terminal cannot take now.
    func write(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(master, $0.baseAddress, $0.count) }
            guard written > 0 else { return }
            offset += written
        }
    }

    /// What gpsd wrote, if anything is waiting.
    func read() -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 4_096)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(master, $0.baseAddress, $0.count) }
        return count > 0 ? Array(buffer[..<count]) : []
    }
}
