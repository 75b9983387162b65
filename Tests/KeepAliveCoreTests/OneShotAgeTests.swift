import Clocks
import Foundation
import KeepAliveCore
import LocationKeepAliveMocks
import Testing

/// A one-shot's age limit, measured on the source's clock when it has one (a replay), and the
/// rule named when the best fix is turned down.
@Suite(.timeLimit(.minutes(3))) struct OneShotAgeTests {
    let source = ScriptedLocationSource()
    let clock = TestClock<Duration>()
    let now = Date(timeIntervalSince1970: 1_700_000_000)

    private func failure(
        of manager: LocationManager,
        desiredAccuracy: Double? = 50,
        maximumAge: Duration? = .seconds(10),
        sending fix: (latitude: Double, accuracy: Double, time: Date)
    ) async throws -> LocationError {
        let request = Task {
            try await manager.requestLocation(desiredAccuracy: desiredAccuracy, maximumAge: maximumAge, timeout: .seconds(2))
        }
        await source.waitForSessions(1)
        source.sendFix(latitude: fix.latitude, longitude: 0, accuracy: fix.accuracy, at: fix.time)
        return try #require(
            await #expect(throws: LocationError.self) { try await value(of: request, advancing: clock, by: .seconds(1)) }
        )
    }

    @Test func aFixTooOldByTheWallClockIsNamedSo() async throws {
        let now = self.now
        let manager = LocationManager(source: source, clock: clock, wallClock: { now })
        let error = try await failure(of: manager, sending: (1, 18.6, now - 3_600))
        #expect(error.code == .locationUnknown)
        #expect(
            error.message
                == "no fix met the request within 2 s (best fix seen: 1.0, 0.0 ±18.6 m, turned down: it is 60 min "
                + "old by the wall clock, more than the maximum age of 10 s)"
        )
        #expect(error.bestLocation?.latitude == 1)
    }

    @Test func aSourceWithItsOwnClockMeasuresAgesOnIt() async throws {
        let now = self.now
        source.currentDate = now + 30
        let manager = LocationManager(source: source, clock: clock, wallClock: { now })
        let error = try await failure(of: manager, sending: (1, 5, now))
        #expect(error.message.hasSuffix("turned down: it is 30 s old by the source's clock, more than the maximum age of 10 s)"))
        // A fix the wall clock would call 25 s in the future is 5 s old on the source's clock: taken.
        let taken = Task { try await manager.requestLocation(maximumAge: .seconds(10), timeout: .seconds(2)) }
        await source.waitForSessions(2)
        source.sendFix(latitude: 2, longitude: 0, accuracy: 5, at: now + 25)
        #expect(try await taken.value.latitude == 2)
    }

    @Test func aFixTooInaccurateIsNamedSo() async throws {
        let now = self.now
        let manager = LocationManager(source: source, clock: clock, wallClock: { now })
        let error = try await failure(of: manager, desiredAccuracy: 5, maximumAge: nil, sending: (1, 18.6, now))
        #expect(
            error.message.hasSuffix(
                "turned down: ±18.6 m is worse than the 5 m asked for; to take fixes like it, pass a desiredAccuracy of 19 m "
                    + "or more, or LocationFilter.bestAccuracy for whatever the receiver gives)"
            )
        )
    }

    /// A maximum age of 0 would turn every fix down (each is a little old when judged), so a
    /// one-shot waits out its timeout and a stream says nothing: refused at once, saying what to pass.
    @Test func aMaximumAgeOfZeroIsRefusedWithWhatToPass() async throws {
        let manager = LocationManager(source: source, clock: clock)
        let error = try await #require(throws: LocationError.self) {
            try await manager.requestLocation(maximumAge: .zero, timeout: .seconds(2))
        }
        #expect(error.code == .invalidOptions)
        #expect(error.message.contains("leave maximumAge out") && error.message.contains(".seconds(1)"), "\(error.message)")
        #expect(throws: LocationError.self) { try LocationFilter(maximumAge: .zero).validate() }
        try LocationFilter(maximumAge: .milliseconds(1)).validate()
        #expect(source.sessionsStarted == 0, "refused before any session started")
    }

    @Test func aOneShotWithAMaximumAgeIsAnsweredByAReplayOfAnOldLog() async throws {
        let replay = NMEAReplaySource(file: NMEAFixture.mt3339.url, speed: 1, clock: clock)
        // The wall clock says today; the log is from another year.
        let manager = LocationManager(source: replay, clock: clock, wallClock: { Date() })
        let request = Task {
            try await manager.requestLocation(desiredAccuracy: 50, maximumAge: .seconds(10), timeout: .seconds(15))
        }
        let fix = try await value(of: request, advancing: clock, by: .milliseconds(250))
        let logTime = try #require(fix.timestamp)
        #expect(Date().timeIntervalSince(logTime) > 86_400 * 365, "a fix of the log, not of today")
        #expect(try #require(replay.currentDate).timeIntervalSince(logTime) <= 10)
    }

    @Test func aReplaysClockRunsAtItsSpeedBetweenReports() async throws {
        let replay = NMEAReplaySource(file: NMEAFixture.mt3339.url, speed: 10, clock: clock)
        #expect(replay.currentDate == nil, "no clock before the log starts")
        try replay.start()
        let first = try #require(replay.currentDate)
        await clock.advance(by: .milliseconds(250))  // 2.5 s of the log: its third report, and half a second
        #expect(try #require(replay.currentDate).timeIntervalSince(first) == 2.5)
        await clock.advance(by: .seconds(60))  // past the end of the 30 s log: the clock goes on
        #expect(try #require(replay.currentDate).timeIntervalSince(first) == 602.5)
    }

    @Test func atSpeedZeroTheReplaysClockIsTheLastReportHandedOut() async throws {
        let replay = NMEAReplaySource(file: NMEAFixture.mt3339.url, speed: 0)
        var times: [Date] = []
        for try await event in replay.events() {
            if case .report(let report) = event, let time = report.time {
                times.append(time)
                #expect(replay.currentDate == time)
            }
        }
        #expect(times.count == 30)
    }
}
