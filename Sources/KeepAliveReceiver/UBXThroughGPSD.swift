import Dispatch
public import KeepAliveCore

/// A u-blox receiver's power, switched through gpsd: off is UBX-RXM-PMREQ into backup (the
/// receiver keeps its RAM and clock, so a start within the ephemeris's validity is hot), on is a
/// few bytes on its input, which wake it. Both go through gpsd's `?DEVICE` write: gpsd stays the
/// device's one opener, and no second program fights it for the serial line.
///
/// gpsd's own u-blox driver never powers the receiver down (its deactivation does nothing, on
/// purpose): without this the receiver tracks, and draws, until its supply is cut.
public struct UBXThroughGPSD: ReceiverPowerControl {
    /// gpsd's host.
    public let host: String
    /// gpsd's port.
    public let port: Int
    /// The receiver's device as gpsd names it (`/dev/ttyACM0`).
    public let path: String
    private static let queue = DispatchQueue(label: "LocationKeepAlive.receiver.gpsd")

    /// The u-blox at `path`, through gpsd at `host`:`port`.
    public init(host: String = "localhost", port: Int = 2947, path: String) {
        self.host = host
        self.port = port
        self.path = path
    }

    /// The first device gpsd drives with its u-blox driver, if any; throws if gpsd cannot be asked.
    public static func find(host: String = "localhost", port: Int = 2947) async throws(ReceiverPowerError) -> UBXThroughGPSD? {
        if case .found(let ubx) = try await search(host: host, port: port) { return ubx }
        return nil
    }

    /// What gpsd's devices say of a u-blox.
    enum Search {
        /// gpsd drives one with its u-blox driver.
        case found(UBXThroughGPSD)
        /// None yet, but gpsd has a device it has not identified (not opened since it started).
        case notYet
        /// None: every device identified, none a u-blox.
        case none
    }

    static func search(host: String, port: Int) async throws(ReceiverPowerError) -> Search {
        let control = GPSDControl(host: host, port: port)
        let devices = try await queue.awaiting { () throws(ReceiverPowerError) in try control.devices() }
        if let ubx = devices.first(where: { $0.driver?.hasPrefix("u-blox") == true }) {
            return .found(UBXThroughGPSD(host: host, port: port, path: ubx.path))
        }
        return devices.contains { $0.driver == nil } ? .notYet : .none
    }

    /// `ubx`.
    public var way: ReceiverPowerWay { .ubx }
    /// Yes: backup mode keeps the receiver's RAM and clock.
    public var keepsBackup: Bool { true }

    /// Bytes on its input: it wakes from backup.
    public func switchOn() async throws(ReceiverPowerError) { try await write(UBXFrame.wakeUp) }

    /// UBX-RXM-PMREQ: backup mode until bytes come.
    public func switchOff() async throws(ReceiverPowerError) { try await write(UBXFrame.backup.bytes) }

    /// A reset of the GNSS (UBX-CFG-RST), for a hot, warm or cold start on purpose.
    public func reset(_ kind: ReceiverStartKind) async throws(ReceiverPowerError) { try await write(UBXFrame.reset(kind).bytes) }

    private func write(_ bytes: [UInt8]) async throws(ReceiverPowerError) {
        let (control, path) = (GPSDControl(host: host, port: port), path)
        try await Self.queue.awaiting { () throws(ReceiverPowerError) in try control.write(bytes, to: path) }
    }
}
