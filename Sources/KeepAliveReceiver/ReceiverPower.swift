public import KeepAliveCore

/// The receiver's power switched as `--receiver-power` says.
public enum ReceiverPower {
    /// The control for `way`: `auto` takes the first that works here (a u-blox gpsd drives, a
    /// modem with GNSS, gpsd's device-hook, else none); a way named but unusable throws, saying
    /// why. Where gpsd has not identified its receiver yet (gpsd opens a device for its first
    /// watcher, and tells its driver only then), a ``ReceiverPowerFinder`` that decides at the
    /// first switch, once a session has opened the device.
    ///
    /// - Parameters:
    ///   - gpsdHost: gpsd's host, asked for its devices.
    ///   - gpsdPort: gpsd's port.
    ///   - hook: gpsd's device-hook, whose presence `auto` looks for.
    public static func choose(
        _ way: ReceiverPowerWay, gpsdHost: String = "localhost", gpsdPort: Int = 2947, hook: String = DeviceHookPower.standardPath
    ) async throws(ReceiverPowerError) -> any ReceiverPowerControl {
        switch try await resolve(way, gpsdHost: gpsdHost, gpsdPort: gpsdPort, hook: hook) {
        case .decided(let control): control
        case .undecided: ReceiverPowerFinder(way, gpsdHost: gpsdHost, gpsdPort: gpsdPort, hook: hook)
        }
    }

    /// What asking now decides.
    enum Resolution {
        /// This control (``NoReceiverPower`` when nothing switches the receiver here).
        case decided(any ReceiverPowerControl)
        /// Not yet: gpsd has a device it has not identified.
        case undecided
    }

    static func resolve(_ way: ReceiverPowerWay, gpsdHost: String, gpsdPort: Int, hook: String) async throws(ReceiverPowerError) -> Resolution {
        switch way {
        case .off: return .decided(NoReceiverPower())
        case .hook: return .decided(DeviceHookPower(path: hook))
        case .ubx:
            switch try await UBXThroughGPSD.search(host: gpsdHost, port: gpsdPort) {
            case .found(let ubx): return .decided(ubx)
            case .notYet: return .undecided
            case .none:
                throw ReceiverPowerError("gpsd at \(gpsdHost):\(gpsdPort) drives no u-blox receiver (`gpspipe -w -n 3` shows its devices' drivers); choose another --receiver-power")
            }
        case .modemmanager:
            guard let modem = try await ModemManagerGNSS.find() else {
                throw ReceiverPowerError("ModemManager has no modem with GPS (`mmcli -m any --location-status`); choose another --receiver-power")
            }
            return .decided(modem)
        case .auto:
            let ubx = (try? await UBXThroughGPSD.search(host: gpsdHost, port: gpsdPort)) ?? .none
            if case .found(let control) = ubx { return .decided(control) }
            if let modem = try? await ModemManagerGNSS.find() { return .decided(modem) }
            if case .notYet = ubx { return .undecided }
            return .decided(DeviceHookPower(path: hook).isInstalled ? DeviceHookPower(path: hook) : NoReceiverPower())
        }
    }
}

/// A way not decided yet (gpsd had not identified its receiver when asked: it opens a device
/// for its first watcher): decided at the first switch gpsd can answer, once a session has opened
/// the device, and kept. Until then the switches do nothing and ``way`` is the one asked.
public final class ReceiverPowerFinder: ReceiverPowerControl {
    private let asked: ReceiverPowerWay
    private let gpsdHost: String
    private let gpsdPort: Int
    private let hook: String
    private let found = Locked<(any ReceiverPowerControl)?>(nil)

    init(_ asked: ReceiverPowerWay, gpsdHost: String, gpsdPort: Int, hook: String) {
        (self.asked, self.gpsdHost, self.gpsdPort, self.hook) = (asked, gpsdHost, gpsdPort, hook)
    }

    /// The way found, or the one asked while none is.
    public var way: ReceiverPowerWay { found.withLock { $0?.way } ?? asked }
    /// The way found's (no while none is).
    public var keepsBackup: Bool { found.withLock { $0?.keepsBackup } ?? false }
    /// Whether the way is decided.
    public var isDecided: Bool { found.withLock { $0 != nil } }

    /// Decides, if it can, then switches on.
    public func switchOn() async throws(ReceiverPowerError) { try await decided()?.switchOn() }
    /// Decides, if it can, then switches off.
    public func switchOff() async throws(ReceiverPowerError) { try await decided()?.switchOff() }

    private func decided() async throws(ReceiverPowerError) -> (any ReceiverPowerControl)? {
        if let control = found.withLock({ $0 }) { return control }
        guard case .decided(let control) = try await ReceiverPower.resolve(asked, gpsdHost: gpsdHost, gpsdPort: gpsdPort, hook: hook) else {
            return nil
        }
        found.withLock { $0 = control }
        return control
    }
}

/// No switch: the receiver stays as it is (`--receiver-power off`, or nothing found by `auto`).
public struct NoReceiverPower: ReceiverPowerControl {
    /// None.
    public init() {}
    /// `off`.
    public var way: ReceiverPowerWay { .off }
    /// Unknown: taken as no (every start predicted cold, so waits are long enough).
    public var keepsBackup: Bool { false }
    /// Nothing.
    public func switchOn() async throws(ReceiverPowerError) {}
    /// Nothing.
    public func switchOff() async throws(ReceiverPowerError) {}
}
