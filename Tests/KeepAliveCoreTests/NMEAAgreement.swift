import Foundation
import KeepAliveCore
import LocationKeepAliveMocks

/// How the native NMEA decoder's fixes compare with gpsd's TPV reports for one log.
///
/// A fix is one receiver epoch: gpsd's mode>=2 TPVs with a position and a time, grouped by
/// time (gpsd often sends two or three TPVs per epoch as sentences arrive; the last is the
/// most complete), against the native decoder's one report per epoch.
struct NMEAAgreement: CustomStringConvertible {
    let log: String
    let gpsdFixes: Int
    let nativeFixes: Int
    let gpsdUntimed: Int
    /// gpsd's untimed fixes (sent before it knew the date) that the native decoder reported, dated.
    let untimedMatched: Int
    /// Native fixes that gpsd reported only untimed, or never (the epoch's last sentence never came).
    var unexplainedNative: [Int] = []
    let matchedTimes: Int
    let onlyGPSD: [Int]
    let onlyNative: [Int]
    /// Largest position difference among the epochs in the same place (within 1e-6 degrees).
    let maxDegreeError: Double
    /// Epochs where the two put the fix in different places.
    let placeMismatches: [Int]
    let modeMismatches: Int
    let modeMismatchTimes: [Int]
    var mismatchDetail: [String] = []
    /// Epochs in the same place where the two give another altitude above sea level (more
    /// than 0.05 m apart, or one has none).
    var altitudeMismatches: [String] = []
    /// Epochs in the same place where both give an altitude.
    var altitudesCompared = 0

    var agrees: Bool {
        gpsdFixes == nativeFixes && onlyGPSD.isEmpty && onlyNative.isEmpty && placeMismatches.isEmpty
            && modeMismatches == 0 && altitudeMismatches.isEmpty
    }

    init(fixture: NMEAFixture) throws {
        log = fixture.name
        let gpsd = try fixture.gpsdReports().filter { $0.mode >= 2 && $0.lat != nil && $0.lon != nil }
        gpsdUntimed = gpsd.filter { $0.millisecondsOfDay == nil }.count
        var gpsdByTime: [Int: GPSDTPV] = [:]
        var gpsdOrder: [Int] = []
        for report in gpsd {
            guard let time = report.millisecondsOfDay else { continue }
            if gpsdByTime[time] == nil { gpsdOrder.append(time) }
            gpsdByTime[time] = report
        }
        let native = try Self.decode(fixture)
        var nativeByTime: [Int: Location] = [:]
        for location in native {
            guard let timestamp = location.timestamp else { continue }
            let millis = Int((timestamp.timeIntervalSince1970 * 1000).rounded()) % 86_400_000
            nativeByTime[millis] = location
        }
        let untimed = gpsd.filter { $0.millisecondsOfDay == nil }
        func samePlace(_ report: GPSDTPV, _ location: Location) -> Bool {
            abs(report.lat! - location.latitude) <= 1e-6 && abs(report.lon! - location.longitude) <= 1e-6
        }
        untimedMatched = untimed.filter { report in native.contains { samePlace(report, $0) } }.count
        gpsdFixes = gpsdByTime.count
        nativeFixes = nativeByTime.count
        onlyGPSD = gpsdOrder.filter { nativeByTime[$0] == nil }
        onlyNative = nativeByTime.keys.filter { gpsdByTime[$0] == nil }.sorted()
        unexplainedNative = onlyNative.filter { time in !untimed.contains { samePlace($0, nativeByTime[time]!) } }
        var worst = 0.0
        var mismatches = 0
        var elsewhere: [Int] = []
        var modeTimes: [Int] = []
        for (time, report) in gpsdByTime {
            guard let location = nativeByTime[time] else { continue }
            let error = max(abs(location.latitude - report.lat!), abs(location.longitude - report.lon!))
            if error > 1e-6 { elsewhere.append(time) } else { worst = max(worst, error) }
            if error <= 1e-6 {
                switch (report.altMSL, location.altitudeMSL) {
                case (nil, nil): break
                case (let gpsd?, let native?) where abs(gpsd - native) <= 0.05: altitudesCompared += 1
                case (let gpsd, let native):
                    altitudeMismatches.append("\(Self.clock(time)) gpsd \(gpsd.map { "\($0)" } ?? "none") native \(native.map { "\($0)" } ?? "none")")
                }
            }
            if location.mode.rawValue != report.mode {
                mismatches += 1
                modeTimes.append(time)
                mismatchDetail.append("\(Self.clock(time)) gpsd \(report.mode) native \(location.mode.rawValue)")
            }
        }
        placeMismatches = elsewhere.sorted()
        modeMismatchTimes = modeTimes.sorted()
        matchedTimes = gpsdByTime.count - onlyGPSD.count
        maxDegreeError = worst
        modeMismatches = mismatches
    }

    /// The native decoder's located fixes for a log.
    static func decode(_ fixture: NMEAFixture) throws -> [Location] {
        NMEALog.decode(try fixture.bytes(), device: fixture.name).fixes
    }

    static let header = """
        | log | gpsd fixes | native fixes | same times | max lat/lon error (deg) | mode mismatches \
        | gpsd untimed (matched) | native only |
        |---|---|---|---|---|---|---|---|
        """

    var description: String {
        let error = maxDegreeError == 0 ? "0" : String(format: "%.1e", maxDegreeError)
        var row = "| \(log) | \(gpsdFixes) | \(nativeFixes) | \(matchedTimes) | \(error) | \(modeMismatches) "
        row += "| \(gpsdUntimed) (\(untimedMatched)) | \(onlyNative.map(Self.clock).joined(separator: ", ")) |"
        if !onlyGPSD.isEmpty { row += " only gpsd: \(onlyGPSD.map(Self.clock))" }
        if !placeMismatches.isEmpty { row += " elsewhere: \(placeMismatches.map(Self.clock))" }
        if !mismatchDetail.isEmpty { row += " modes: \(mismatchDetail.sorted())" }
        if !altitudeMismatches.isEmpty { row += " altitudes (\(altitudeMismatches.count)): \(altitudeMismatches.sorted().prefix(5))" }
        return row
    }

    static func clock(_ millis: Int) -> String {
        String(format: "%02d:%02d:%06.3f", millis / 3_600_000, millis / 60_000 % 60, Double(millis % 60_000) / 1000)
    }
}
