import Glibc
public import KeepAliveCore

/// gpsd's device-hook as the receiver's switch: gpsd runs `/etc/gpsd/device-hook DEVICE
/// ACTIVATE` as it opens the device for its first watcher and `DEACTIVATE` as it closes it, 60 s
/// after its last (`RELEASE_TIMEOUT`); the hook powers the receiver (a GPIO, a USB port's power,
/// `mmcli`). Our part is closing our watch at once: the switches here do nothing themselves.
///
/// The price: the receiver stays on 60 s after each fix, against a few milliseconds with `ubx`.
public struct DeviceHookPower: ReceiverPowerControl {
    /// Where gpsd looks for its hook.
    public static let standardPath = "/etc/gpsd/device-hook"
    /// The hook's path.
    public let path: String

    /// The hook at `path`.
    public init(path: String = DeviceHookPower.standardPath) { self.path = path }

    /// Whether the hook is there and executable.
    public var isInstalled: Bool { access(path, X_OK) == 0 }

    /// `hook`.
    public var way: ReceiverPowerWay { .hook }
    /// Unknown (the hook may cut the supply): taken as no.
    public var keepsBackup: Bool { false }
    /// Nothing: gpsd runs the hook as it opens the device for our watch.
    public func switchOn() async throws(ReceiverPowerError) {}
    /// Nothing: gpsd runs the hook 60 s after our watch closes.
    public func switchOff() async throws(ReceiverPowerError) {}
}
