public import FoundationEssentials
public import KeepAliveCore
public import KeepAliveReceiver

/// A GNSS receiver as a value: its power (tracking, acquiring after a start, in backup), the
/// start each power-up makes from its ephemeris's age, the time to its first fix and the error
/// converging after it, the track it is fed, and the UBX it answers. `gnss-receiver` runs it on
/// a pseudo-terminal that gpsd opens as a device.
///
/// Times are seconds on the boot-time clock (the device's sleep included), given by the caller.
/// What it cannot show: real signals (the start times are the model's, not a sky's), UBX output
/// (it speaks NMEA whatever gpsd configures, and acknowledges the configuration), and the
/// current of a state (the energy model multiplies its states' times by a profile's figures).
public struct SimulatedReceiver: Sendable {
    /// Its power.
    public enum Power: Sendable, Hashable {
        /// Powered, searching after a `start`; its first fix due at `fixAt`.
        case acquiring(start: ReceiverStartKind, since: Double, fixAt: Double)
        /// Powered, with a fix since `since`.
        case tracking(start: ReceiverStartKind, since: Double)
        /// Backup mode since `since`: RAM and clock kept, nothing output, woken by input.
        case backup(since: Double)
        /// GNSS switched off since `since` (a modem's `AT+QGPSEND`: its engine keeps its data).
        case off(since: Double)

        /// Whether it draws the full current (acquiring or tracking).
        public var isOn: Bool {
            switch self {
            case .acquiring, .tracking: true
            case .backup, .off: false
            }
        }

        /// `acquiring`, `tracking`, `backup` or `off`.
        public var name: String {
            switch self {
            case .acquiring: "acquiring"
            case .tracking: "tracking"
            case .backup: "backup"
            case .off: "off"
            }
        }
    }

    /// One entry of its power log.
    public struct LogEntry: Sendable, Hashable, Codable {
        /// When (boot-time seconds).
        public var at: Double
        /// `on`, `fix`, `backup` or `off`.
        public var event: String
        /// The start, for `on` and `fix`.
        public var start: String?
        /// The time to first fix, for `fix`.
        public var timeToFix: Double?
        /// What caused it (`UBX-RXM-PMREQ`, `input`, `UBX-CFG-RST`, `command`).
        public var cause: String?
    }

    /// The starts' model.
    public let model: ReceiverStartModel
    /// Where it is: a function of the time since it was made.
    public let track: SimulatedTrack
    /// Its power now.
    public private(set) var power: Power
    /// When its ephemeris was last collected (tracked for the model's collection time), if ever.
    public private(set) var ephemerisAt: Double?
    /// Its power log, in order.
    public private(set) var log: [LogEntry] = []
    private let startedAt: Double
    private var scanner = UBXScanner()

    /// A receiver powered up at `now` with a `first` start, fed `track`.
    public init(track: SimulatedTrack, first: ReceiverStartKind, at now: Double, model: ReceiverStartModel = ReceiverStartModel()) {
        self.model = model
        self.track = track
        startedAt = now
        // A hot or warm first start: an ephemeris `first` allows.
        switch first {
        case .hot: ephemerisAt = now
        case .warm: ephemerisAt = now - model.ephemerisValidity.seconds
        case .cold: ephemerisAt = nil
        }
        power = .off(since: now)
        powerUp(at: now, cause: "launch", start: first)
    }

    /// Bytes gpsd wrote to it at `now`: wakes it from backup; UBX it obeys. Returns its answers.
    public mutating func take(_ bytes: [UInt8], at now: Double) -> [UInt8] {
        advance(to: now)
        if case .backup = power, !bytes.isEmpty {
            powerUp(at: now, cause: "input")
            scanner = UBXScanner()
            return []  // the bytes that woke it are lost
        }
        var answer: [UInt8] = []
        for frame in scanner.take(bytes) { answer += obey(frame, at: now) }
        return answer
    }

    /// A command on its supply (the modem's `AT+QGPS=1`, `AT+QGPSEND`): `on` or `off`.
    public mutating func command(_ on: Bool, at now: Double) {
        advance(to: now)
        if on, !power.isOn { powerUp(at: now, cause: "command") }
        if !on, power.isOn { powerDown(to: .off(since: now), at: now, cause: "command") }
    }

    /// The NMEA it outputs for the second at `now` (UTC `date`): nothing in backup or off.
    public mutating func sentences(at now: Double, date: Date) -> [String] {
        advance(to: now)
        switch power {
        case .backup, .off: return []
        case .acquiring: return NMEASentences.noFix(date: date)
        case .tracking(let start, let since):
            let error = model.error(after: start, sinceFirstFix: .seconds(now - since))
            return NMEASentences.fix(track.position(at: now - startedAt), error: error, date: date)
        }
    }

    /// Its state moved on to `now`: a due first fix taken, the ephemeris collected while tracking.
    public mutating func advance(to now: Double) {
        if case .acquiring(let start, let since, let fixAt) = power, now >= fixAt {
            power = .tracking(start: start, since: fixAt)
            log.append(LogEntry(at: fixAt, event: "fix", start: start.rawValue, timeToFix: fixAt - since))
        }
        if case .tracking(_, let since) = power, now - since >= model.ephemerisCollection.seconds {
            ephemerisAt = now
        }
    }

    private mutating func obey(_ frame: UBXFrame, at now: Double) -> [UInt8] {
        switch (frame.messageClass, frame.id) {
        case (0x0A, 0x04) where frame.payload.isEmpty:  // MON-VER poll
            return SimulatedReceiver.version.bytes
        case (0x06, 0x00) where frame.payload.count <= 1:  // CFG-PRT poll
            return UBXFrame(0x06, 0x00, [1, 0, 0, 0, 0xC0, 0x08, 0, 0, 0x80, 0x25, 0, 0, 0x07, 0, 0x03, 0, 0, 0, 0, 0]).bytes
        case (0x02, 0x41):  // RXM-PMREQ
            guard frame.payload.count >= 8, frame.payload[4] & 0x02 != 0 else { return [] }
            powerDown(to: .backup(since: now), at: now, cause: "UBX-RXM-PMREQ")
            return []
        case (0x06, 0x04) where frame.payload.count >= 4:  // CFG-RST
            let mask = UInt16(frame.payload[0]) | UInt16(frame.payload[1]) << 8
            if mask == 0xFFFF { ephemerisAt = nil } else if mask & 0x0001 != 0, let at = ephemerisAt {
                ephemerisAt = min(at, now - model.ephemerisValidity.seconds)
            }
            powerUp(at: now, cause: "UBX-CFG-RST", restart: true)
            return UBXFrame.acknowledge(frame).bytes
        case (0x06, _):
            return UBXFrame.acknowledge(frame).bytes
        default:
            return []
        }
    }

    private mutating func powerUp(at now: Double, cause: String, start forced: ReceiverStartKind? = nil, restart: Bool = false) {
        guard restart || !power.isOn else { return }
        let age = ephemerisAt.map { Duration.seconds(now - $0) }
        let start = forced ?? model.start(ephemerisAge: age, backupKept: true)  // no data kept: no ephemeris
        power = .acquiring(start: start, since: now, fixAt: now + model.timeToFix(start).seconds)
        log.append(LogEntry(at: now, event: "on", start: start.rawValue, cause: cause))
    }

    private mutating func powerDown(to state: Power, at now: Double, cause: String) {
        advance(to: now)
        power = state
        log.append(LogEntry(at: now, event: state.name, cause: cause))
    }

    /// Its UBX-MON-VER: an M8's software and hardware versions and extensions, as gpsd reads them.
    public static let version: UBXFrame = {
        func field(_ text: String, _ width: Int) -> [UInt8] { Array(text.utf8.prefix(width)) + [UInt8](repeating: 0, count: width - min(width, text.utf8.count)) }
        let payload = field("ROM CORE 3.01 (107888)", 30) + field("00080000", 10)
            + field("FWVER=SPG 3.01", 30) + field("PROTVER=18.00", 30) + field("MOD=NEO-M8N-0", 30)
            + field("GPS;GLO;GAL;BDS", 30)
        return UBXFrame(0x0A, 0x04, payload)
    }()
}
