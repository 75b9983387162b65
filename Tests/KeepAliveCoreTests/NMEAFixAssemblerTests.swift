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
}
