internal import CGPS
import FoundationEssentials
import Glibc
import Synchronization

/// One libgps connection to gpsd: the only place in the library that calls C or holds a pointer.
///
/// Every method but ``interrupt()`` must be called on one serial queue (the reader's); that
/// confinement is what makes the unchecked `Sendable` below safe: the value only crosses to
/// that queue. ``interrupt()`` touches only the socket, and the reader calls it under the lock
/// that orders it before ``close()``.
final class GPSDConnection: @unchecked Sendable {
    private let data: UnsafeMutablePointer<gps_data_t>
    private let message: UnsafeMutablePointer<CChar>
    private static let messageCapacity = 16_384
    /// `false` after ``close()`` or once ``interrupt()`` was called.
    private(set) var isOpen = true
    private let interrupted = Atomic(false)
    private var satellitesUsed: Int?
    private var device: String?

    /// Opens a connection. The corresponding C function is `gps_open`.
    init(host: String, port: Int) throws(LocationError) {
        Self.ignoreSIGPIPE
        data = .allocate(capacity: 1)
        data.initialize(to: gps_data_t())
        message = .allocate(capacity: Self.messageCapacity)
        cgps_clear_errno()
        guard gps_open(host, String(port), data) == 0 else {
            let code = cgps_errno()
            let reason = code == 0 ? "connection refused" : String(cString: gps_errstr(code))
            isOpen = false  // deinit frees the buffers
            throw LocationError.gpsdUnreachable(host: host, port: port, reason: reason)
        }
        // Reads never block: gps_read then answers 0 for "nothing more yet", and the reader waits
        // with poll() (libgps's gps_waiting uses select(), whose fd_set holds no descriptor of
        // 1,024 or more: glibc aborts the process there, as a test run with 1,200 open files saw).
        let flags = fcntl(data.pointee.gps_fd, F_GETFL)
        _ = fcntl(data.pointee.gps_fd, F_SETFL, flags | O_NONBLOCK)
    }

    deinit {
        close()
        data.deallocate()
        message.deallocate()
    }

    /// The socket, for a readiness source.
    var fileDescriptor: Int32 { Int32(data.pointee.gps_fd) }

    /// Asks gpsd to stream JSON reports. The corresponding C function is `gps_stream`.
    func watch() -> Bool {
        gps_stream(data, UInt32(WATCH_ENABLE) | UInt32(WATCH_JSON), nil) == 0
    }

    /// Asks gpsd for its last fix at once (answered by a POLL message).
    /// The corresponding C function is `gps_send`.
    func poll() -> Bool {
        cgps_send_command(data, "?POLL;") == 0
    }

    /// Waits until gpsd sent something, the wait timed out, or ``interrupt()`` was called: a
    /// `poll` on the socket, with no limit on the descriptor's number. libgps holds no complete
    /// message then: ``readAvailable(_:)`` took every one.
    func waitForData(seconds: Int) -> Bool {
        var socket = pollfd(fd: data.pointee.gps_fd, events: Int16(POLLIN), revents: 0)
        if interrupted.load(ordering: .relaxed) { return false }
        let ready = SystemCall.retryingOnInterrupt { Glibc.poll(&socket, 1, Int32(seconds * 1_000)) }
        return ready > 0 && !interrupted.load(ordering: .relaxed)
    }

    /// Wakes a reader blocked in ``waitForData(seconds:)`` for good: the socket is shut down,
    /// so the wait returns and the next read sees the end of the stream. Any thread.
    func interrupt() {
        interrupted.store(true, ordering: .relaxed)
        _ = shutdown(data.pointee.gps_fd, Int32(SHUT_RDWR))
    }

    /// Reads every message that has come, without blocking: until `gps_read` says nothing more
    /// is there yet (0, on the non-blocking socket).
    ///
    /// - Returns: `false` when gpsd closed the connection or sent a line that is not a gpsd
    ///   message.
    /// The corresponding C function is `gps_read`.
    func readAvailable(_ deliver: (GPSDMessage) -> Void) -> Bool {
        while true {
            if interrupted.load(ordering: .relaxed) { return false }
            cgps_clear_errno()
            let count = gps_read(data, message, Int32(Self.messageCapacity))
            if count < 0 {
                // libgps fails the same way for the end of the stream and for a line it cannot
                // read (too long, garbled): only the socket tells them apart.
                if !peerClosed() { deliver(.unreadable) }
                return false
            }
            if count == 0 { return true }
            let message = decodeMessage()
            deliver(message)
            if case .malformed = message { return false }  // the stream cannot be trusted now
        }
    }

    /// Whether gpsd closed its end: a peek finds the end of the stream rather than data or nothing yet.
    private func peerClosed() -> Bool {
        var byte: UInt8 = 0
        let count = recv(data.pointee.gps_fd, &byte, 1, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT))
        return count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
    }

    /// Stops streaming and closes the socket. The corresponding C function is `gps_close`.
    func close() {
        guard isOpen else { return }
        isOpen = false
        gps_close(data)
    }

    private func decodeMessage() -> GPSDMessage {
        let fix = data.pointee.fix
        switch messageClass() {
        case .tpv:
            let mode = FixMode(rawValue: Int(fix.mode)) ?? .notSeen
            let seconds = withUnsafePointer(to: fix) { cgps_fix_seconds($0) }
            let time = seconds == 0 ? nil : Date(timeIntervalSince1970: seconds)
            var location: Location?
            if mode.hasPosition, fix.latitude.isFinite, fix.longitude.isFinite {
                location = Location(
                    latitude: fix.latitude,
                    longitude: fix.longitude,
                    altitudeHAE: finite(fix.altHAE),
                    altitudeMSL: finite(fix.altMSL),
                    horizontalAccuracy: finite(fix.eph),
                    verticalAccuracy: finite(fix.epv),
                    speed: finite(fix.speed),
                    course: finite(fix.track),
                    timestamp: time,
                    mode: mode,
                    quality: FixQuality(rawValue: Int(fix.status)),
                    satellitesUsed: satellitesUsed,
                    device: devicePath()
                )
            }
            return .report(FixReport(mode: mode, time: time, location: location))
        case .sky:
            let used = Int(data.pointee.satellites_used)
            if used > 0 { satellitesUsed = used }
            return .other
        case .version:
            return .version(cString(data.pointee.version.release))
        case .device:
            return .device(devicePath() ?? "")
        case .error:
            return .error(cString(data.pointee.error))
        case .watch:
            return .watching
        case .poll:
            let length = strnlen(message, Self.messageCapacity)
            let json = UnsafeRawBufferPointer(start: message, count: length)
            return GPSDPollReply.report(from: json, satellitesUsed: satellitesUsed).map { GPSDMessage.polled($0.report, gpsdAge: $0.gpsdAge) } ?? .other
        case .devices, .other:
            return .other
        case .malformed:
            return .malformed(messageExcerpt())
        }
    }

    /// The `class` of the JSON message just read, from the raw bytes libgps copied out.
    private func messageClass() -> GPSDMessageClass {
        GPSDMessageClass(message: UnsafeRawBufferPointer(start: message, count: strnlen(message, Self.messageCapacity)))
    }

    /// The start of the message just read, for an error that quotes it.
    private func messageExcerpt() -> String {
        let bytes = UnsafeRawBufferPointer(start: message, count: min(60, strnlen(message, Self.messageCapacity)))
        return String(decoding: bytes.map { $0 < 0x20 || $0 > 0x7E ? UInt8(ascii: "?") : $0 }, as: UTF8.self)
    }

    /// The device of the last report; the same `String` while the path stays the same, so a
    /// stream of reports does not allocate one each.
    private func devicePath() -> String? {
        withUnsafeBytes(of: data.pointee.dev.path) { raw in
            let bytes = raw.prefix { $0 != 0 }
            if bytes.isEmpty { return nil }
            if let device, device.utf8.elementsEqual(bytes) { return device }
            device = String(decoding: bytes, as: UTF8.self)
            return device
        }
    }

    private func cString<T>(_ tuple: T) -> String {
        withUnsafeBytes(of: tuple) { raw in
            let bytes = raw.prefix { $0 != 0 }
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    private func finite(_ value: Double) -> Double? { value.isFinite ? value : nil }

    /// A write to a gpsd that died raises SIGPIPE, which kills the process: ignore it once.
    private static let ignoreSIGPIPE: Void = { _ = signal(SIGPIPE, SIG_IGN) }()
}

/// What one gpsd message meant to us.
enum GPSDMessage: Sendable {
    case report(FixReport)
    /// gpsd's last fix, in answer to `?POLL;`, and how old gpsd's clock says it is: the source
    /// judges whether it is current (``GPSDPollReply/isCurrent(fixTime:gpsdAge:receiverNow:)``).
    case polled(FixReport, gpsdAge: Double)
    case version(String)
    case device(String)
    case watching
    case error(String)
    /// A line that is not a gpsd JSON message, quoted.
    case malformed(String)
    /// A line libgps could not read at all (too long, garbled).
    case unreadable
    case other
}
