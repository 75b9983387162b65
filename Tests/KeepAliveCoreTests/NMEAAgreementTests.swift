import LocationKeepAliveMocks
import Testing

/// The native NMEA decoder against gpsd 3.22's own decode of every bundled log.
@Suite struct NMEAAgreementTests {
    /// Epochs the native decoder reports and gpsd 3.22 does not, each explained in the README:
    /// gpsd reports only at the sentence it has learned ends a cycle, and these epochs were
    /// cut short in the log or fell in gpsd's first, learning cycle.
    static let nativeOnly: [String: [String]] = [
        "beidou-bd.log": ["07:41:55.799"],
        "bt451.log": ["14:33:08.500", "15:25:04.500", "15:25:08.500"],
        "humminbird-M37.log": ["19:41:02.000", "19:41:04.000"],
        "rst39.log": ["20:41:32.100"],
    ]

    @Test(arguments: NMEAFixture.all)
    func agreesWithGPSD(fixture: NMEAFixture) throws {
        let agreement = try NMEAAgreement(fixture: fixture)
        print(agreement)
        #expect(agreement.onlyGPSD.isEmpty, "gpsd fixes the native decoder missed")
        #expect(agreement.placeMismatches.isEmpty)
        #expect(agreement.maxDegreeError <= 1e-6)
        #expect(agreement.modeMismatches == 0)
        #expect(agreement.altitudeMismatches.isEmpty, "altitudes above sea level: \(agreement.altitudeMismatches.prefix(5))")
        #expect(agreement.onlyNative.map(NMEAAgreement.clock) == Self.nativeOnly[fixture.name] ?? [])
    }

    /// Where the made-up logs (one gpsd rule each) are expected to differ, each explained in the
    /// README's agreement table: gpsd's first cycles, before it knows which sentence ends one;
    /// gpsd reading 24:00:00 as the next midnight; and gpsd's 3D for three satellites. A late
    /// GGA on a depth sounder's bus (late-gga.log) agrees epoch by epoch.
    static let madeUpDifferences: [String: (onlyGPSD: [String], onlyNative: [String], elsewhere: [String], modes: [String])] = [
        "chart-plotter.log": ([], [], ["13:00:01.000"], ["13:00:01.000"]),
        "gga-few-satellites.log": ([], [], [], []),
        "late-gga.log": ([], [], [], []),
        "gga-gsa-rmc.log": (
            [], [], [],
            ["12:00:12.000", "12:00:13.000", "12:00:29.000", "12:00:30.000", "12:02:13.000", "12:02:14.000", "12:03:58.000"]
        ),
        "two-positions.log": ([], [], ["13:00:03.000", "13:00:05.000"], []),
        "unreadable-times.log": (["00:00:00.000"], ["14:00:01.000"], [], []),
    ]

    @Test(arguments: NMEAFixture.madeUp)
    func agreesWithGPSDOnMadeUpLogs(fixture: NMEAFixture) throws {
        let agreement = try NMEAAgreement(fixture: fixture)
        print(agreement)
        let expected = try #require(Self.madeUpDifferences[fixture.name], "no expectations for \(fixture)")
        #expect(agreement.onlyGPSD.map(NMEAAgreement.clock) == expected.onlyGPSD)
        #expect(agreement.onlyNative.map(NMEAAgreement.clock) == expected.onlyNative)
        #expect(agreement.placeMismatches.map(NMEAAgreement.clock) == expected.elsewhere)
        #expect(agreement.modeMismatchTimes.map(NMEAAgreement.clock) == expected.modes)
        #expect(agreement.maxDegreeError <= 1e-6)
        // gpsd reports the GGA's altitude on a 2D fix too (gga-few-satellites: 30 such epochs).
        #expect(agreement.altitudeMismatches.isEmpty, "altitudes above sea level: \(agreement.altitudeMismatches.prefix(5))")
        #expect(agreement.altitudesCompared > 0)
    }

    @Test func fixtureSetIsComplete() {
        #expect(NMEAFixture.all.count == 17)
        #expect(NMEAFixture.madeUp.map(\.name) == Self.madeUpDifferences.keys.sorted())
    }
}
