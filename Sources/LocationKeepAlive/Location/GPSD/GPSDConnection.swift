internal import CGPS
import Foundation

/// One libgps connection to gpsd: the only place in the library that calls C or holds a pointer.
///
/// Every method must be called on one serial queue (the reader's); that confinement is what
/// makes the unchecked `Sendable` below safe: the value only crosses to that queue.
final class GPSDConnection: @unchecked Sendable {
    private let data: UnsafeMutablePointer<gps_data_t>
    private let message: UnsafeMutablePointer<CChar>
    private static let messageCapacity = 16_384
    private var isOpen = true
    private var satellitesUsed: Int?

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

    /// Reads every message already buffered, without blocking.
    ///
    /// - Returns: `false` when gpsd closed the connection (then `gps_waiting` would spin forever).
    /// The corresponding C functions are `gps_read` and `gps_waiting`.
    func readAvailable(_ deliver: (GPSDMessage) -> Void) -> Bool {
        repeat {
            cgps_clear_errno()
            let count = gps_read(data, message, Int32(Self.messageCapacity))
            if count < 0 { return false }
            if count == 0 { return true }
            deliver(decodeMessage())
        } while gps_waiting(data, 0)
        return true
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
        case "TPV":
            let mode = FixMode(rawValue: Int(fix.mode)) ?? .notSeen
            let time =
                fix.time.tv_sec == 0
                ? nil
                : Date(
                    timeIntervalSince1970: Double(fix.time.tv_sec) + Double(fix.time.tv_nsec) / 1e9
                )
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
        case "SKY":
            let used = Int(data.pointee.satellites_used)
            if used > 0 { satellitesUsed = used }
            return .other
        case "VERSION":
            return .version(cString(data.pointee.version.release))
        case "DEVICE":
            return .device(devicePath() ?? "")
        case "ERROR":
            return .error(cString(data.pointee.error))
        case "WATCH":
            return .watching
        default:
            return .other
        }
    }

    /// The `class` of the JSON message just read, from the raw text libgps copied out.
    private func messageClass() -> Substring {
        let text = String(cString: message)
        guard let start = text.range(of: "\"class\":\"") else { return "" }
        let rest = text[start.upperBound...]
        return rest.prefix { $0 != "\"" }
    }

    private func devicePath() -> String? {
        let path = cString(data.pointee.dev.path)
        return path.isEmpty ? nil : path
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
    case version(String)
    case device(String)
    case watching
    case error(String)
    case other
}
