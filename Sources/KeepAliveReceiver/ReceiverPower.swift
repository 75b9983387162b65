public import KeepAliveCore

/// The receiver's power switched as `--receiver-power` says.
public enum ReceiverPower {
    /// The control for `way`: `auto` takes the first that works here (a u-blox gpsd drives, a
    /// modem with GNSS, gpsd's device-hook, else none); a way named but unusable throws, saying why.
    ///
    /// - Parameters:
    ///   - gpsdHost: gpsd's host, asked for its devices.
    ///   - gpsdPort: gpsd's port.
    ///   - hook: gpsd's device-hook, whose presence `auto` looks for.
    public static func choose(
        _ way: ReceiverPowerWay, gpsdHost: String = "localhost", gpsdPort: Int = 2947, hook: String = DeviceHookPower.standardPath
    ) async throws(ReceiverPowerError) -> any ReceiverPowerControl {
        switch way {
        case .off: return NoReceiverPower()
        case .hook: return DeviceHookPower(path: hook)
        case .ubx:
            guard let ubx = try await UBXThroughGPSD.find(host: gpsdHost, port: gpsdPort) else {
                throw ReceiverPowerError("gpsd at \(gpsdHost):\(gpsdPort) drives no u-blox receiver (`gpspipe -w -n 3` shows its devices' drivers); choose another --receiver-power")
            }
            return ubx
        case .modemmanager:
            guard let modem = try await ModemManagerGNSS.find() else {
                throw ReceiverPowerError("ModemManager has no modem with GPS (`mmcli -m any --location-status`); choose another --receiver-power")
            }
            return modem
        case .auto:
            if let ubx = try? await UBXThroughGPSD.find(host: gpsdHost, port: gpsdPort) { return ubx }
            if let modem = try? await ModemManagerGNSS.find() { return modem }
            if DeviceHookPower(path: hook).isInstalled { return DeviceHookPower(path: hook) }
            return NoReceiverPower()
        }
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
