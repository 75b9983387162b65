import LocationKeepAlive
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
        #expect(agreement.maxDegreeError <= 1e-6)
        #expect(agreement.modeMismatches == 0)
        #expect(agreement.onlyNative.map(NMEAAgreement.clock) == Self.nativeOnly[fixture.name] ?? [])
    }

    @Test func fixtureSetIsComplete() {
        #expect(NMEAFixture.all.count == 17)
    }
}
