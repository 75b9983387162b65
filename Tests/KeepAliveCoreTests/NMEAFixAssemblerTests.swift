import Foundation
import KeepAliveCore
import Testing

@Suite struct NMEAFixAssemblerTests {
    private func reports(_ lines: [String]) throws -> [FixReport] {
        var assembler = NMEAFixAssembler()
        var reports: [FixReport] = []
        for line in lines {
            if let report = assembler.add(try NMEAParser.parse(line)) { reports.append(report) }
        }
        if let report = assembler.flush() { reports.append(report) }
        return reports
    }

    @Test func mergesOneEpochIntoOneReportWithGPSDAccuracy() throws {
        let reports = try reports([
            "$GPGGA,202640.000,4404.1306,N,12118.8515,W,2,10,0.98,1127.7,M,-19.6,M,0000,0000*6C",
            "$GPGSA,A,3,20,16,09,03,07,10,23,19,27,30,,,1.64,0.98,1.31*05",
            "$GPRMC,202640.000,A,4404.1306,N,12118.8515,W,0.03,225.97,130415,,,D*73",
            "$GPZDA,202640.000,13,04,2015,,*54",
        ])
        #expect(reports.count == 1)
        let location = try #require(reports.first?.location)
        #expect(location.mode == .threeDimensional)
        #expect(location.quality == .dgps)
        #expect(location.timestamp == Date(timeIntervalSince1970: 1_428_956_800))  // 2015-04-13T20:26:40Z
        #expect(abs(location.horizontalAccuracy! - 4.655) < 1e-9)  // gpsd: HDOP 0.98 x 4.75 m
        #expect(abs(location.verticalAccuracy! - 7.5325) < 1e-9)
        #expect(abs(location.altitudeHAE! - 1108.1) < 1e-9)
        #expect(abs(location.speed! - 0.03 * 1852 / 3600) < 1e-12)
    }

    @Test func noFixEpochsAreReportsWithoutLocation() throws {
        let reports = try reports([
            "$GPRMC,095257.809,V,2712.6404,S,15303.1201,E,0.00,0.00,080407,,,A*64",
            "$GPGGA,095258.809,2712.6404,S,15303.1201,E,0,00,00.0,4.0,M,42.2,M,,*74",
        ])
        #expect(reports.map(\.mode) == [.noFix, .noFix])
        #expect(reports.allSatisfy { $0.location == nil })
    }

    @Test func dateCarriesOverAndUntimedSentencesJoinTheEpoch() throws {
        let reports = try reports([
            "$GPZDA,202640.000,13,04,2015,,*54",
            "$GPGSA,A,3,20,16,09,03,07,10,23,19,27,30,,,1.64,0.98,1.31*05",
            "$GPGGA,202641.000,4404.1305,N,12118.8515,W,2,11,0.83,1127.7,M,-19.6,M,0000,0000*65",
        ])
        // The ZDA's epoch has the GSA's 3D mode but no position yet; the GGA's has both.
        #expect(reports.map(\.mode) == [.threeDimensional, .threeDimensional])
        #expect(reports.first?.location == nil)
        #expect(reports.last?.location?.timestamp == Date(timeIntervalSince1970: 1_428_956_801))
    }

    /// The chart plotter of issue 23 (B&G Zeus² 9, gpsd's bundg_zeus_9.log): a GGA for 09:48:16
    /// after that second's RMC and ZDA, carrying the position the GLL after it dates 09:48:17.
    static let latePlotterGGA = [
        "$GPRMC,094816,A,5250.9713,N,00518.7344,E,5.5,237.9,200818,1.4,E,A*16",
        "$SDHDG,236.7,,,1.3,E*37",
        "$GPZDA,094816,20,08,2018,-01,00*67",
        "$SDVHW,238.0,T,236.6,M,6.6,N,12.3,K*7A",
        "$GPGGA,094816,5250.9705,N,00518.7323,E,1,12,0.60,-5,M,46.8,M,,*49",
        "$GPGLC,9960,,,,,,,,,,,,*75",
        "$GPGLL,5250.9705,N,00518.7323,E,094817,A,A*44",
    ]
    static let depthSounder = "$SDDBT,17.5,f,5.3,M,2.9,F*38"

    /// Within 1e-9 degrees of gpsd's printed place.
    private func isAt(_ location: Location, _ latitude: Double, _ longitude: Double) -> Bool {
        abs(location.latitude - latitude) < 1e-9 && abs(location.longitude - longitude) < 1e-9
    }

    @Test func onADepthSoundersBusALateGGAIsLeftOutAsGPSDLeavesIt() throws {
        let first = try #require(try reports([Self.depthSounder] + Self.latePlotterGGA).first?.location)
        // gpsd 3.22 reports 52.849521667, 5.312240000 for 09:48:16: the RMC's place.
        #expect(isAt(first, 52.849521667, 5.312240000))
        #expect(first.altitudeMSL == nil)
    }

    @Test func aLateGGAFollowedByASentenceGPSDReportsAfterCounts() throws {
        var lines = [Self.depthSounder] + Self.latePlotterGGA
        lines.insert("$SDHDG,235.6,,,1.3,E*35", at: 6)  // after the GGA, before the next second
        let first = try #require(try reports(lines).first?.location)
        #expect(isAt(first, 52.849508333, 5.312205))
        #expect(first.altitudeMSL == -5)
    }

    @Test func withoutADepthSounderTheEpochsLastPositionStands() throws {
        let first = try #require(try reports(Self.latePlotterGGA).first?.location)
        #expect(isAt(first, 52.849508333, 5.312205))
    }
}
