/// Switches a GNSS receiver on and off: a u-blox through gpsd, a modem's GNSS through
/// ModemManager, or nothing (gpsd's device-hook does it, or nobody does).
///
/// The ``LocationManager`` calls it, in order and one call at a time: on before a session that
/// needs the receiver, off as soon as none does.
public protocol ReceiverPowerControl: Sendable {
    /// The way it switches the receiver.
    var way: ReceiverPowerWay { get }
    /// Whether the receiver keeps its backup power (RAM and clock) while off, so that a start
    /// within the ephemeris's validity is hot; without it every start is cold.
    var keepsBackup: Bool { get }
    /// Powers the receiver up.
    func switchOn() async throws(ReceiverPowerError)
    /// Powers the receiver down.
    func switchOff() async throws(ReceiverPowerError)
}

/// How the receiver's power is switched: `--receiver-power` and `receiver-power=` in the
/// configuration file.
public enum ReceiverPowerWay: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The first that works here: `ubx` if gpsd has a u-blox, else `modemmanager` if a modem
    /// has GNSS, else `hook` if gpsd has a device-hook, else `off`.
    case auto
    /// UBX power commands written to a u-blox through gpsd (`?DEVICE` with `hexdata`, as
    /// `ubxtool` and `gpsctl` write).
    case ubx
    /// ModemManager's Location interface on the system bus (`Setup` with or without GPS).
    case modemmanager
    /// gpsd's own `/etc/gpsd/device-hook`, run as gpsd opens and closes the device: we close our
    /// watch at once, gpsd closes the device 60 s later and the hook powers it down.
    case hook
    /// Never switched: the receiver stays as it is.
    case off

    /// Its name on the command line.
    public var description: String { rawValue }
}

/// A switch that failed, and what to do.
public struct ReceiverPowerError: Error, Sendable, Hashable, DescribedError {
    /// What failed, and what to do.
    public var description: String

    /// An error saying `description`.
    public init(_ description: String) { self.description = description }
}

/// A change of the receiver's power, as status, metrics and JSON say it.
public enum ReceiverPowerNote: Sendable, Hashable, CustomStringConvertible {
    /// Switched on; the start expected.
    case on(way: ReceiverPowerWay, start: ReceiverStartKind)
    /// The first fix after a switch on: the start it was and its time to first fix.
    case fixed(start: ReceiverStartKind, timeToFix: Duration)
    /// Switched off.
    case off(way: ReceiverPowerWay, wasOn: Duration)
    /// A switch that failed; the receiver is as it was.
    case failed(way: ReceiverPowerWay, reason: String)
    /// Kept on after a fix to collect the ephemeris anew, so that the next starts stay hot.
    case refreshing(for: Duration)

    /// In words.
    public var description: String {
        switch self {
        case .on(let way, let start): "receiver on (\(way), \(start) start expected)"
        case .fixed(let start, let time): "receiver's first fix: \(start) start, \(time.secondsText) to fix"
        case .off(let way, let wasOn): "receiver off (\(way)) after \(wasOn.secondsText) on"
        case .failed(let way, let reason): "receiver power (\(way)) failed: \(reason)"
        case .refreshing(let time): "receiver kept on \(time.secondsText) to collect the ephemeris: the next starts stay hot"
        }
    }
}
