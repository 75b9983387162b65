public import FoundationEssentials
import Glibc
import SystemPackage

/// An NMEA log read in chunks, in constant memory: a file, or a stream read as it comes (a
/// pipe, a FIFO, standard input as `-`, a serial device).
///
/// A stream is read only when it has bytes (checked with `poll`, never blocking), so a replay of
/// a live feed waits for it without holding a thread; a file is read straight through.
public final class NMEAInput: Sendable {
    /// The log (`/dev/stdin` for standard input).
    public let file: URL
    /// The path opened, `-` for standard input.
    private let openedPath: String
    /// Not a regular file: it can be read once, as it comes (no `loops`).
    public let isStream: Bool
    private let descriptor: FileDescriptor
    private let closesOnDeinit: Bool

    /// What one read gave.
    enum Chunk: Sendable {
        case bytes([UInt8])
        /// A stream has nothing yet; ask again later.
        case notYet
        case end
    }

    /// Opens `file` (`URL(fileURLWithPath: "/dev/stdin")` for standard input).
    ///
    /// - Throws: ``LocationError`` (`replayFailed`) with the reason: no such file, permission
    ///   denied, a directory.
    public convenience init(file: URL) throws(LocationError) {
        try self.init(opening: file.path, file: file)
    }

    /// Opens `path` (`-`: standard input): use ``init(file:)``.
    @available(*, deprecated, message: "use init(file:), with URL(fileURLWithPath: \"/dev/stdin\") for standard input")
    public convenience init(path: String) throws(LocationError) {
        try self.init(opening: path, file: URL(fileURLWithPath: path == "-" ? "/dev/stdin" : path))
    }

    /// The path of ``file``: use ``file``.
    @available(*, deprecated, renamed: "file")
    public var path: String { openedPath }

    private init(opening path: String, file: URL) throws(LocationError) {
        self.file = file
        self.openedPath = path
        if path == "-" {
            descriptor = .standardInput
            closesOnDeinit = false
        } else {
            do {
                descriptor = try FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec])
            } catch {
                throw Self.failure(path, Self.reason(error))
            }
            closesOnDeinit = true
        }
        var status = stat()
        guard fstat(descriptor.rawValue, &status) == 0 else {
            let reason = String(cString: strerror(errno)).lowercased()
            if closesOnDeinit { try? descriptor.close() }
            throw Self.failure(path, reason)
        }
        let kind = status.st_mode & S_IFMT
        if kind == S_IFDIR {
            if closesOnDeinit { try? descriptor.close() }
            throw Self.failure(path, "it is a directory; give a log file, a FIFO, or - for standard input")
        }
        isStream = kind != S_IFREG
    }

    deinit {
        if closesOnDeinit { try? descriptor.close() }
    }

    /// Up to `count` bytes; a stream with nothing waiting gives ``Chunk/notYet``.
    func read(upTo count: Int) throws(LocationError) -> Chunk {
        if isStream {
            var ready = pollfd(fd: descriptor.rawValue, events: Int16(POLLIN), revents: 0)
            if SystemCall.retryingOnInterrupt({ poll(&ready, 1, 0) }) == 0 { return .notYet }
        }
        var buffer = [UInt8](repeating: 0, count: count)
        while true {
            do {
                let got = try buffer.withUnsafeMutableBytes { try descriptor.read(into: $0) }
                guard got > 0 else { return .end }
                buffer.removeSubrange(got...)
                return .bytes(buffer)
            } catch Errno.interrupted {
                continue
            } catch {
                throw Self.failure(openedPath, Self.reason(error))
            }
        }
    }

    /// Blocks until a stream has bytes or ends (for synchronous readers; a file is always ready).
    func waitUntilReadable() {
        guard isStream else { return }
        var ready = pollfd(fd: descriptor.rawValue, events: Int16(POLLIN), revents: 0)
        _ = SystemCall.retryingOnInterrupt { poll(&ready, 1, -1) }
    }

    private static func reason(_ error: any Error) -> String {
        guard let errno = error as? Errno else { return "\(error)" }
        return String(cString: strerror(errno.rawValue)).lowercased()
    }

    private static func failure(_ path: String, _ reason: String) -> LocationError {
        let name = path == "-" || path == "/dev/stdin" ? "standard input" : path
        return LocationError(.replayFailed, "cannot read NMEA log \(name): \(reason)")
    }
}
