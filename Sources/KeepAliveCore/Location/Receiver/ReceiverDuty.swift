/// The receiver's power as a value that takes events and returns actions: on while a session
/// needs it, off as soon as none does; each start's kind predicted from the ephemeris's age and
/// its time to first fix measured; how long a wake should wait for a fix, and whether a wake
/// should keep the receiver on to collect the ephemeris anew.
///
/// Times are instants on the boot-time clock (which runs through the device's sleep), given by
/// the caller.
public struct ReceiverDuty: Sendable {
    /// What happened.
    public enum Event: Sendable, Hashable {
        /// A session needs the receiver (`true`), or none does any more.
        case demand(Bool)
        /// A fix came, `age` old (on the source's clock; `nil` unknown). A fix older than the time
        /// since the switch on was made before it (gpsd's last, answering a poll): no first fix.
        case fix(age: Duration?)
        /// A switch was tried and failed; the receiver is taken to be as it was.
        case switchFailed(on: Bool, reason: String)
    }

    /// What to do, in order.
    public enum Action: Sendable, Hashable {
        /// Power the receiver up.
        case switchOn
        /// Power the receiver down.
        case switchOff
        /// Tell this change.
        case note(ReceiverPowerNote)
    }

    /// The starts' model (the M8's by default).
    public let model: ReceiverStartModel
    /// The way the receiver is switched.
    public private(set) var way: ReceiverPowerWay
    /// Whether it keeps its backup power while off.
    public private(set) var keepsBackup: Bool
    /// Whether it is on (as last switched).
    public private(set) var isOn = false
    /// The time to first fix measured at the last start of each kind.
    public private(set) var measured: [ReceiverStartKind: Duration] = [:]
    /// When the ephemeris was last collected (the receiver tracked for the collection time), if ever.
    public private(set) var ephemerisCollectedAt: Duration?
    /// The start the last first fix was, by its time.
    public private(set) var lastStart: ReceiverStartKind?
    private var onSince: Duration?
    private var pendingStart: ReceiverStartKind?
    private var trackingSince: Duration?
    /// Whether it was ever switched off by us: before that, its state is unknown (it may have
    /// been tracking for hours), and its first fix measures no start.
    private var knownOff = false

    /// A receiver thought off, switched `way`.
    public init(way: ReceiverPowerWay, keepsBackup: Bool, model: ReceiverStartModel = ReceiverStartModel()) {
        self.way = way
        self.keepsBackup = keepsBackup
        self.model = model
    }

    /// The way decided since (`auto` found a u-blox at the first switch gpsd could answer).
    public mutating func adopt(way: ReceiverPowerWay, keepsBackup: Bool) {
        (self.way, self.keepsBackup) = (way, keepsBackup)
    }

    /// Takes one event at `now`; returns what to do.
    public mutating func handle(_ event: Event, at now: Duration) -> [Action] {
        switch event {
        case .demand(true):
            guard !isOn else { return [] }
            let start = expectedStart(at: now)
            (isOn, onSince, pendingStart, trackingSince) = (true, now, knownOff ? start : nil, knownOff ? nil : now)
            return [.switchOn, .note(.on(way: way, start: start))]
        case .demand(false):
            guard isOn else { return [] }
            noteTracking(at: now)
            let wasOn = onSince.map { now - $0 } ?? .zero
            (isOn, onSince, pendingStart, trackingSince, knownOff) = (false, nil, nil, nil, true)
            return [.switchOff, .note(.off(way: way, wasOn: wasOn))]
        case .fix(let age):
            guard isOn, let onSince else { return [] }
            if let age, age >= now - onSince { return [] }  // made before the switch on
            noteTracking(at: now)
            guard pendingStart != nil else { return [] }
            pendingStart = nil
            trackingSince = now
            // The start it was, by its time: the prediction is the model's, the receiver's is real.
            let timeToFix = now - onSince
            let start = model.kind(ofTimeToFix: timeToFix)
            measured[start] = timeToFix
            lastStart = start
            return [.note(.fixed(start: start, timeToFix: timeToFix))]
        case .switchFailed(let on, let reason):
            if on { (isOn, onSince, pendingStart, trackingSince) = (false, nil, nil, nil) }
            return [.note(.failed(way: way, reason: reason))]
        }
    }

    /// The start a switch on at `now` would make: the model's from the ephemeris's age where
    /// its collection was seen; else the start the last one was (a receiver found running, whose
    /// ephemeris came before us, or wakes too short to collect one); else cold.
    public func expectedStart(at now: Duration) -> ReceiverStartKind {
        guard ephemerisCollectedAt != nil || lastStart == nil else { return lastStart ?? .cold }
        return model.start(ephemerisAge: ephemerisCollectedAt.map { now - $0 }, backupKept: keepsBackup)
    }

    /// The time to first fix expected of a start at `now`: the one measured at the last start of
    /// that kind, else the model's.
    public func expectedTimeToFix(at now: Duration) -> Duration {
        if isOn {
            guard let pendingStart else { return .zero }  // tracking already
            return measured[pendingStart] ?? model.timeToFix(pendingStart)
        }
        let start = expectedStart(at: now)
        return measured[start] ?? model.timeToFix(start)
    }

    /// How long a wake at `now` should wait for its fix, within `bound`: twice the start
    /// expected, and at least 5 s more than it (gpsd's cycle and a slow resume), never more
    /// than the bound. A wake that gets none by then records "no fix" and lets the device sleep.
    public func fixWait(within bound: Duration, at now: Duration) -> Duration {
        let expected = expectedTimeToFix(at: now)
        return min(bound, max(expected * 2, expected + .seconds(5)))
    }

    /// How long a wake at `now` should keep the receiver tracking after its fix so that the
    /// next wake, `nextWake` later, still starts hot; `nil` when it needs none (the ephemeris
    /// will still be current then) or the receiver keeps no backup.
    public func ephemerisRefresh(at now: Duration, nextWake: Duration) -> Duration? {
        guard keepsBackup else { return nil }
        if let collected = ephemerisCollectedAt, now + nextWake - collected < model.ephemerisValidity { return nil }
        let tracked = trackingSince.map { now - $0 } ?? .zero
        return max(.zero, model.ephemerisCollection - tracked)
    }

    private mutating func noteTracking(at now: Duration) {
        guard let trackingSince, now - trackingSince >= model.ephemerisCollection else { return }
        ephemerisCollectedAt = now
    }
}
