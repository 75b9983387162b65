import Foundation
import LocationKeepAlive
import LocationKeepAliveMocks
import IntegrationSupport
import Testing

/// Fix ages measured on the receiver's clock, not the system's: on a board whose system clock
/// is a year ahead of the receiver (gpsd here a mock), a fresh fix is fresh.
@Suite(.timeLimit(.minutes(3)))
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
        let fix = try await manager.requestLocation(maximumAge: .seconds(3600), timeout: Tools.patience)
        #expect(abs(fix.timestamp!.timeIntervalSince(fixTime)) < 0.01, "by the system clock a year old; by the receiver's, fresh")
        let clock = try #require(source.currentDate)
        let elapsed = started.duration(to: .now) / .seconds(1)
        #expect(
            clock >= fixTime.addingTimeInterval(-0.01) && clock <= fixTime.addingTimeInterval(elapsed + 0.01),
            "the receiver's time, moved on since by at most the \(elapsed) s the test took: \(clock)"
        )
        let cached = try await manager.requestLocation(maximumAge: .seconds(3600), timeout: Tools.patience)
        #expect(cached == fix, "the cached fix, seconds old on the receiver's clock")
    }

    /// The one rule for fix ages, the same for a replay and for gpsd fed the same log: the quick
    /// start's log, recorded in 2017, answers a one-shot with a 10 s maximum age through gpsd as
    /// it does replayed (before, gpsd's clock ignored times before 2020 and the wall clock
    /// called the fix 3,608 days old).
    @Test func anOldLogThroughGPSDAnswersAMaximumAgeAsItsReplayDoes() async throws {
        let log = NMEAFixture("ublox-8.log").url
        let replayed = try await LocationManager(source: NMEAReplaySource(file: log, speed: 0))
            .requestLocation(maximumAge: .seconds(10), timeout: Tools.patience)
        let port = try await Tools.freePort()
        let live = try await withGPSFake(log: log, port: port) {
            try await waitUntilGPSDAccepts(port: port)
            let source = GPSDSource(port: port)
            let fix = try await LocationManager(source: source)
                .requestLocation(maximumAge: .seconds(10), timeout: Tools.patience)
            let clock = try #require(source.currentDate, "the receiver's clock, from gpsd's fixes")
            #expect(abs(clock.timeIntervalSince(fix.timestamp!)) < 10, "the fix is fresh on the receiver's clock: \(clock)")
            return fix
        }
        let year = { (date: Date?) in date.map { Calendar(identifier: .gregorian).component(.year, from: $0) } }
        #expect(year(replayed.timestamp) == 2017 && year(live.timestamp) == 2017, "the log's own times")
        #expect(Date().timeIntervalSince(live.timestamp!) > 365 * 86_400, "years old by the wall clock, which measures nothing here")
    }

    /// gpsd fed the quick start's old log answers a cold one-shot with `maximumAge` from its
    /// current fix at once (`?POLL`), as the replay answers from the moment it plays: gpsd's
    /// clock, years from the log's, no longer turns that fix down. Proven by the fix itself: with
    /// an epoch every 7 s (a sentence every 0.5 s), the one-shot's fix is the one a watcher
    /// already had when it asked, not the next epoch's (which an answer that waited would be).
    @Test func gpsdsCurrentFixOfAnOldLogAnswersAColdOneShotAtOnce() async throws {
        let log = NMEAFixture("ublox-8.log").url
        let port = try await Tools.freePort()
        try await withGPSFake(log: log, port: port, cycle: 0.5) {
            try await waitUntilGPSDAccepts(port: port)
            let watcher = LocationManager(source: GPSDSource(port: port))
            var attempts: [String] = []
            for try await case .location(let seen) in watcher.updates(LocationFilter(desiredAccuracy: 50)) {
                guard let current = seen.timestamp else { continue }
                let asked = ContinuousClock.now
                let fix = try await LocationManager(source: GPSDSource(port: port))
                    .requestLocation(desiredAccuracy: 50, maximumAge: .seconds(10), timeout: Tools.patience)
                let took = asked.duration(to: .now)
                let newest = watcher.location?.timestamp
                if fix.timestamp == current {
                    print("a cold one-shot on gpsd fed ublox-8.log answered in \(took) with the current fix")
                    return
                }
                // An epoch came while it asked: the current fix changed under it; ask again.
                attempts.append("asked at \(current), answered \(fix.timestamp.map { "\($0)" } ?? "no time") in \(took), newest \(newest.map { "\($0)" } ?? "none")")
                #expect(newest != current, "the one-shot waited for the next epoch instead of taking gpsd's current fix: \(attempts)")
                if attempts.count == 3 || newest == current { break }
            }
            Issue.record("no one-shot answered with gpsd's current fix: \(attempts)")
        }
    }
}
