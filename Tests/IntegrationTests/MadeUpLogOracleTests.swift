import Foundation
import LocationKeepAlive
import LocationKeepAliveMocks
import IntegrationSupport
import Testing

/// The made-up logs that probe gpsd's rules (few satellites, two positions in one epoch,
/// unreadable times) through a real gpsd: what it decodes now is the stored oracle the native
/// decoder is held to (`NMEAAgreementTests`), epoch by epoch.
@Suite(.timeLimit(.minutes(3)))
struct MadeUpLogOracleTests {
    @Test(arguments: NMEAFixture.madeUp)
    func gpsdStillDecodesWhatTheOracleSays(log: NMEAFixture) async throws {
        let live = try await GatedGPSD.run(log: log.url) { gpsd in
            try await gpsd.go()
            return try await gpsd.reports()
        }
        let stored = try log.gpsdReports()
        func epochs(_ reports: [GPSDTPV]) -> [String] {
            reports.filter { $0.millisecondsOfDay != nil }.map { tpv in
                "\(tpv.millisecondsOfDay!) \(tpv.mode) \(tpv.lat.map { String(format: "%.9f", $0) } ?? "-") "
                    + (tpv.lon.map { String(format: "%.9f", $0) } ?? "-")
            }
        }
        #expect(!stored.isEmpty)
        #expect(epochs(live) == epochs(stored), "\(log): gpsd \(live.count) reports, stored \(stored.count)")
    }
}
