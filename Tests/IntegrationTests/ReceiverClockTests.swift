import Foundation
import LocationKeepAlive
import LocationKeepAliveMocks
import Testing

/// Fix ages measured on the receiver's clock, not the system's: on a board whose system clock
/// is a year ahead of the receiver (gpsd here a mock), a fresh fix is fresh.
@Suite(.timeLimit(.minutes(1)))
struct ReceiverClockTests {
    @Test func aFreshFixIsFreshWhenTheSystemClockIsAYearAhead() async throws {
        let fixTime = Date().addingTimeInterval(-365 * 86_400)
        let started = ContinuousClock.now
        let gpsd = try MockGPSD(scripts: [[.tpv(latitude: 52.1, longitude: 4.3, time: fixTime), .stall]])
        defer { gpsd.stop() }
        let source = GPSDSource(host: "127.0.0.1", port: gpsd.port)
        #expect(source.currentDate == nil, "no fix yet: the system clock measures ages")
        let manager = LocationManager(source: source)
        // An hour: by the system clock the fix is a year old, so only the receiver's clock takes it
        // (and a loaded machine, or ThreadSanitizer, cannot age it past that).
        let fix = try await manager.requestLocation(maximumAge: .seconds(3600), timeout: Tools.bound(.seconds(10)))
        #expect(abs(fix.timestamp!.timeIntervalSince(fixTime)) < 0.01, "by the system clock a year old; by the receiver's, fresh")
        let clock = try #require(source.currentDate)
        let elapsed = started.duration(to: .now) / .seconds(1)
        #expect(
            clock >= fixTime.addingTimeInterval(-0.01) && clock <= fixTime.addingTimeInterval(elapsed + 0.01),
            "the receiver's time, moved on since by at most the \(elapsed) s the test took: \(clock)"
        )
        let cached = try await manager.requestLocation(maximumAge: .seconds(3600), timeout: Tools.bound(.seconds(10)))
        #expect(cached == fix, "the cached fix, seconds old on the receiver's clock")
    }
}
