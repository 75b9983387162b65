import FoundationEssentials

/// Merges the sentences of one receiver epoch (same UTC time of day) into one ``FixReport``.
///
/// An epoch ends when a sentence with another time arrives, or at ``flush()``. The date
/// (from RMC or ZDA), the fix type (GSA) and the DOPs carry over to later epochs, as gpsd
/// keeps them. Accuracy is computed as gpsd computes it: HDOP or VDOP times its user range
/// error (19 m / 23 m, or 4.75 m / 5.75 m with DGPS).
///
/// On a bus with a depth sounder (from the first DBT on) the epoch is what it was after the
/// last sentence gpsd 3.22 reports after, found by following gpsd's end-of-cycle detector
/// sentence by sentence (see "Agreement with gpsd"). A sentence that comes after it and before
/// the time changes, such as a chart plotter's GGA sent late after the second's RMC and ZDA, is
/// left out, as gpsd leaves it out.
public struct NMEAFixAssembler: Sendable {
    /// Written into every ``Location/device``.
    public var device: String?
    private var date: NMEADate?
    private var lastEpochTime: NMEATime?
    private var fixType: Int?
    /// The last epoch with a position was 3D, and the last GGA had an altitude: gpsd keeps a
    /// later GGA with 3 satellites, or without an altitude, in 3D.
    private var lastWas3D = false
    private var lastGGAHadAltitude = false
    private var hdop: Double?
    private var vdop: Double?
    private var epoch = Epoch()
    /// The epoch as it was when gpsd last reported it, while ``cycle`` follows a depth sounder.
    private var reported: Epoch?
    private var cycle = GPSDReportingCycle()

    /// An assembler; `device` names it in reports.
    public init(device: String? = nil) { self.device = device }

    /// Adds one sentence; returns the previous epoch's report when this sentence starts a new epoch.
    public mutating func add(_ sentence: NMEASentence) -> FixReport? {
        let time = sentence.time
        var report: FixReport?
        if let time, epoch.time.map({ $0 != time }) ?? (epoch.saysInvalid || epoch.latitude != nil) {
            // A new epoch; an untimed one that said "no fix" (or had a position) stands on its own.
            report = flush()
        }
        if let time, epoch.time == nil { epoch.time = time }
        epoch.isEmpty = false
        let gpsdReports = cycle.reports(after: sentence)
        apply(sentence)
        if gpsdReports { reported = epoch }
        return report
    }

    private mutating func apply(_ sentence: NMEASentence) {
        switch sentence {
        case .rmc(let rmc):
            epoch.note(validity: rmc.isValid)
            if rmc.isValid == true { epoch.ggaFewSatellites = false }
            epoch.note(latitude: rmc.latitude, longitude: rmc.longitude)
            epoch.speedKnots = rmc.speedKnots ?? epoch.speedKnots
            epoch.course = rmc.course ?? epoch.course
            if let rmcDate = rmc.date { epoch.date = rmcDate }
            epoch.note(faaMode: rmc.faaMode)
        case .gga(let gga), .gns(let gga):
            epoch.note(latitude: gga.latitude, longitude: gga.longitude)
            if let quality = gga.quality {
                // gpsd 3.22: fewer than 3 satellites used (or none said) is no fix; 3D needs an
                // altitude and 4 satellites, unless the last epoch was 3D with a GGA altitude.
                // A later RMC or GLL saying valid still makes a fix, as in gpsd, where the last
                // sentence sets the mode (SiRFstarV sends a GLGGA with its 2 GLONASS satellites).
                // None at all is no fix whatever comes after (haicom-305N's first fixes).
                let satellites = gga.satellites ?? 0
                if quality == 0 || gga.satellites == 0 { epoch.note(validity: false) }
                if quality > 0 { epoch.ggaFewSatellites = satellites < 3 }
                if quality > 0 && satellites >= 3 { epoch.note(validity: true) }
                if quality > 0 {
                    epoch.ggaHadAltitude = gga.altitudeMSL != nil
                    epoch.ggaSays3D =
                        (gga.altitudeMSL != nil && satellites >= 4) || (lastWas3D && lastGGAHadAltitude)
                }
                epoch.quality = quality > 0 ? FixQuality(ggaQuality: quality) : epoch.quality
            }
            epoch.satellites = gga.satellites ?? epoch.satellites
            if let value = gga.hdop { hdop = value }
            epoch.altitudeMSL = gga.altitudeMSL ?? epoch.altitudeMSL
            epoch.geoidSeparation = gga.geoidSeparation ?? epoch.geoidSeparation
        case .gsa(let gsa):
            if let type = gsa.fixType, (1...3).contains(type) {
                fixType = type
                epoch.fixType = type
            }
            if gsa.satellitesUsed > 0, epoch.satellites == nil { epoch.satellites = gsa.satellitesUsed }
            if let value = gsa.hdop { hdop = value }
            if let value = gsa.vdop { vdop = value }
        case .gll(let gll):
            epoch.note(validity: gll.isValid)
            if gll.isValid == true { epoch.ggaFewSatellites = false }
            epoch.note(latitude: gll.latitude, longitude: gll.longitude)
            epoch.note(faaMode: gll.faaMode)
        case .vtg(let vtg):
            epoch.speedKnots = vtg.speedKnots ?? epoch.speedKnots
            epoch.course = vtg.course ?? epoch.course
        case .zda(let zda):
            if let zdaDate = zda.date { epoch.date = zdaDate }
        case .gst, .ancillary, .other:
            break
        }
    }

    /// Closes the current epoch (at the end of the input) and returns its report, if it said anything.
    public mutating func flush() -> FixReport? {
        defer {
            epoch = Epoch()
            reported = nil
        }
        guard !epoch.isEmpty else { return nil }
        if let epochDate = epoch.date {
            date = epochDate
        } else if let time = epoch.time, let last = lastEpochTime, let known = date,
            last.millisecondsOfDay - time.millisecondsOfDay > 12 * 3_600_000
        {
            date = known.nextDay()  // passed midnight without a new date
        }
        if let time = epoch.time { lastEpochTime = time }
        guard epoch.saidSomething else { return nil }
        let timestamp = epoch.time.flatMap { time in date.map { $0.timestamp(at: time) } }

        // What gpsd reported last (on a depth sounder's bus), while everything the epoch said
        // carries over, as in gpsd: a late GGA's altitude keeps the next epoch 3D.
        let carried3D = lastWas3D && lastGGAHadAltitude
        let shown = cycle.followsDepthSounder ? reported ?? epoch : epoch
        let mode = shown.mode(carriedFixType: fixType, carried3D: carried3D)
        let wholeMode = cycle.followsDepthSounder ? epoch.mode(carriedFixType: fixType, carried3D: carried3D) : mode
        lastWas3D = wholeMode == .threeDimensional
        lastGGAHadAltitude = wholeMode.hasPosition && (epoch.ggaHadAltitude ?? lastGGAHadAltitude)
        guard mode.hasPosition, let latitude = shown.latitude, let longitude = shown.longitude else {
            return FixReport(mode: mode == .notSeen ? .noFix : mode, time: timestamp)  // a mode without a position yet
        }
        let isDifferential = shown.quality == .dgps
        let location = Location(
            latitude: latitude,
            longitude: longitude,
            // The epoch's GGA altitude, on a 2D fix too, as gpsd 3.22 reports it (without a
            // vertical accuracy: a 2D fix has none).
            altitudeHAE: shown.altitudeMSL.flatMap { msl in shown.geoidSeparation.map { msl + $0 } },
            altitudeMSL: shown.altitudeMSL,
            horizontalAccuracy: hdop.map { $0 * (isDifferential ? 4.75 : 19.0) },
            verticalAccuracy: mode == .threeDimensional ? vdop.map { $0 * (isDifferential ? 5.75 : 23.0) } : nil,
            speed: shown.speedKnots.map { $0 * 1852.0 / 3600.0 },
            course: shown.course,
            timestamp: timestamp,
            mode: mode,
            quality: shown.quality ?? .gps,
            satellitesUsed: shown.satellites,
            device: device
        )
        return FixReport(mode: mode, time: timestamp, location: location)
    }
}

/// What one epoch's sentences said so far.
private struct Epoch {
    var isEmpty = true
    var time: NMEATime?
    var date: NMEADate?
    var latitude: Double?
    var longitude: Double?
    var altitudeMSL: Double?
    var geoidSeparation: Double?
    var speedKnots: Double?
    var course: Double?
    var quality: FixQuality?
    var satellites: Int?
    var fixType: Int?
    var ggaHadAltitude: Bool?
    var ggaSays3D: Bool?
    /// The last GGA used fewer than 3 satellites, and no valid RMC or GLL came after it.
    var ggaFewSatellites = false
    var saysValid = false
    var saysInvalid = false

    var saidSomething: Bool { saysValid || saysInvalid || ggaFewSatellites || fixType != nil || latitude != nil }

    mutating func note(validity: Bool?) {
        guard let validity else { return }
        if validity { saysValid = true } else { saysInvalid = true }
    }

    mutating func note(latitude: Double?, longitude: Double?) {
        guard let latitude, let longitude else { return }
        self.latitude = latitude
        self.longitude = longitude
    }

    mutating func note(faaMode: UInt8?) {
        guard let faaMode, let faaQuality = FixQuality(faaMode: faaMode) else { return }
        if quality == nil || quality == .gps { quality = faaQuality }
    }

    /// Any sentence saying "no fix" wins; then a GGA saying 3D (this epoch's, or the last
    /// epoch's while the fix lasts), as in gpsd; then the GSA fix type; then 2D.
    func mode(carriedFixType: Int?, carried3D: Bool) -> FixMode {
        if saysInvalid || ggaFewSatellites { return .noFix }
        if fixType == 1 && !saysValid { return .noFix }
        guard saysValid || fixType.map({ $0 >= 2 }) == true else { return .notSeen }
        if ggaSays3D ?? carried3D { return .threeDimensional }
        return (fixType ?? carriedFixType) == 3 ? .threeDimensional : .twoDimensional
    }
}

extension NMEASentence {
    /// The UTC time of day the sentence carries, if any.
    var time: NMEATime? {
        switch self {
        case .rmc(let s): s.time
        case .gga(let s), .gns(let s): s.time
        case .gll(let s): s.time
        case .gst(let s): s.time
        case .zda(let s): s.time
        case .gsa, .vtg, .ancillary, .other: nil
        }
    }
}

extension FixQuality {
    init?(ggaQuality: Int) {
        switch ggaQuality {
        case 1: self = .gps
        case 2, 9: self = .dgps
        case 3: self = .precise
        case 4: self = .rtkFixed
        case 5: self = .rtkFloat
        case 6: self = .deadReckoning
        case 7: self = .timeOnly
        case 8: self = .simulated
        default: return nil
        }
    }

    init?(faaMode: UInt8) {
        switch faaMode {
        case UInt8(ascii: "A"): self = .gps
        case UInt8(ascii: "D"): self = .dgps
        case UInt8(ascii: "E"): self = .deadReckoning
        case UInt8(ascii: "R"): self = .rtkFixed
        case UInt8(ascii: "F"): self = .rtkFloat
        case UInt8(ascii: "S"): self = .simulated
        case UInt8(ascii: "P"): self = .precise
        default: return nil
        }
    }
}

extension NMEADate {
    func nextDay() -> NMEADate {
        let next = CivilDate.date(days: CivilDate.days(year: year, month: month, day: day) + 1)
        return NMEADate(year: next.year, month: next.month, day: next.day)
    }

    /// Seconds since 1970 by the civil calendar, no `Calendar` on the hot path.
    func timestamp(at time: NMEATime) -> Date {
        let days = CivilDate.days(year: year, month: month, day: day)
        return Date(timeIntervalSince1970: Double(days * 86_400_000 + time.millisecondsOfDay) / 1000)
    }
}
