/// gpsd 3.22's end-of-cycle detector, followed sentence by sentence to tell after which
/// sentences gpsd reports the epoch it is in.
///
/// gpsd reports at the sentences it has learned end a cycle: when the time of day changes, the
/// last sentence with a time before the change becomes one. A depth sounder's DBT changes this
/// for good (gpsd marks DBT as a cycle continuer, and 3.22 never clears the mark): from then on
/// every sentence without a fix time of its own (ZDA and GST included, which gpsd does not use
/// to find cycles) becomes the end of the cycle and is reported after, if gpsd decodes anything
/// from it, and each one takes the mark from the last timed sentence before it. A timed
/// sentence (RMC, GGA, GNS, GLL) is reported after only if it still holds the mark.
///
/// The native decoder uses this only on such a bus (``followsDepthSounder``); elsewhere its
/// one report per epoch already carries what gpsd's last report does. Approximations: gpsd's
/// other timed sentences (GBS, PASHR, PSTI) count as untimed here, and a GSV set is taken as
/// decoded whatever its talker.
struct GPSDReportingCycle {
    /// The sentences that carry a fix time of their own, as gpsd's detector tells them apart
    /// (a bit each: the detector runs on every sentence of a replay).
    private enum TimedKind: UInt8 { case rmc = 1, gga = 2, gns = 4, gll = 8 }

    /// A DBT was seen: gpsd 3.22 continues every cycle to the untimed sentences after it.
    private(set) var followsDepthSounder = false
    /// The timed sentences gpsd reports after, as ``TimedKind`` bits.
    private var endsOfCycle: UInt8 = 0
    private var lastTimed: TimedKind?
    private var lastTime: NMEATime?

    /// Takes the next sentence; true when gpsd 3.22 reports its epoch right after it.
    mutating func reports(after sentence: NMEASentence) -> Bool {
        if case .ancillary(.depth) = sentence { followsDepthSounder = true }
        guard let (kind, time) = Self.timed(sentence) else {
            guard followsDepthSounder else { return false }
            if let lastTimed { endsOfCycle &= ~lastTimed.rawValue }
            return Self.decodesSomething(sentence)
        }
        if let lastTime, lastTime != time, let lastTimed, !followsDepthSounder {
            endsOfCycle |= lastTimed.rawValue
        }
        lastTime = time
        lastTimed = kind
        return endsOfCycle & kind.rawValue != 0
    }

    private static func timed(_ sentence: NMEASentence) -> (TimedKind, NMEATime)? {
        switch sentence {
        case .rmc(let rmc): rmc.time.map { (.rmc, $0) }
        case .gga(let gga): gga.time.map { (.gga, $0) }
        case .gns(let gns): gns.time.map { (.gns, $0) }
        case .gll(let gll): gll.time.map { (.gll, $0) }
        case .gsa, .vtg, .gst, .zda, .ancillary, .other: nil
        }
    }

    /// gpsd sends a report only when the sentence gave it something (a TPV follows data).
    private static func decodesSomething(_ sentence: NMEASentence) -> Bool {
        switch sentence {
        case .rmc, .gga, .gns, .gll: true
        case .gsa(let gsa): gsa.fixType.map { (1...3).contains($0) } ?? false
        case .vtg(let vtg): vtg.course != nil
        case .gst(let gst): gst.time != nil
        case .zda(let zda): zda.time != nil && zda.date != nil
        case .ancillary(.depth(let metres)): metres != nil
        case .ancillary: true
        case .other: false
        }
    }
}
