import Clocks
import Foundation
import KeepAliveCore
import LocationKeepAliveMocks
import Testing

@Suite(.timeLimit(.minutes(3))) struct NMEAReplaySourceTests {
    @Test func asFastAsPossibleDeliversEveryEpochThenFinishes() async throws {
        let manager = LocationManager(source: NMEAReplaySource(file: NMEAFixture.mt3339.url, speed: 0))
        var fixes = 0
        var finished: NMEAStatistics?
        for try await update in manager.updates() {
            switch update {
            case .location: fixes += 1
            case .status(.replayFinished(let statistics)): finished = statistics
            case .status: break
            }
        }
        #expect(fixes == 30)
        #expect(finished?.sentences == 138 && finished?.reports == 30 && finished?.badChecksums == 0)
    }

    @Test func recordedSpeedFollowsTheReceiverClockInVirtualTime() async throws {
        let clock = TestClock<Duration>()
        let source = NMEAReplaySource(file: NMEAFixture.mt3339.url, speed: 1, clock: clock)
        let counter = Counter()
        let reader = Task {
            for try await event in source.events() { if case .report = event { counter.increment() } }
        }
        try await waitUntil { counter.value == 1 }  // the first epoch needs no wait
        await clock.advance(by: .milliseconds(999))
        #expect(counter.value == 1)
        await clock.advance(by: .milliseconds(1))
        try await waitUntil { counter.value == 2 }
        try await value(of: reader, advancing: clock, by: .seconds(1))
        #expect(counter.value == 30)
    }

    @Test func speedFactorDividesTheWaits() async throws {
        let clock = TestClock<Duration>()
        let source = NMEAReplaySource(file: NMEAFixture.mt3339.url, speed: 10, clock: clock)
        let counter = Counter()
        let reader = Task { for try await case .report in source.events() { counter.increment() } }
        try await waitUntil { counter.value == 1 }
        await clock.advance(by: .milliseconds(100))
        try await waitUntil { counter.value == 2 }
        try await value(of: reader, advancing: clock, by: .milliseconds(100))
        #expect(counter.value == 30)
    }

    @Test func tortureLogCountsWhatItSkips() async throws {
        let source = NMEAReplaySource(file: NMEAFixture("gp-320fw-2019-04-07-coldboot.log").url, speed: 0)
        var statistics: NMEAStatistics?
        for try await case .status(.replayFinished(let counted)) in source.events() { statistics = counted }
        let counted = try #require(statistics)
        #expect(counted.badChecksums + counted.missingChecksums + counted.malformed >= 40)
        #expect(counted.sentences > 80)
    }

    @Test func missingFileAndBadSpeedAreClearErrors() async throws {
        let missing = NMEAReplaySource(file: URL(fileURLWithPath: "/nonexistent/log.nmea"), speed: 0)
        let error = try #require(await #expect(throws: LocationError.self) { for try await _ in missing.events() {} })
        #expect(error.code == .replayFailed && error.message.contains("/nonexistent/log.nmea"))
        let fast = NMEAReplaySource(file: NMEAFixture.mt3339.url, speed: -2)
        await #expect(throws: LocationError.self) { for try await _ in fast.events() {} }
    }
}

@Suite struct ReconnectPolicyTests {
    @Test func growsExponentiallyToTheCap() {
        let policy = ReconnectPolicy(initialDelay: .milliseconds(250), multiplier: 2, maximumDelay: .seconds(2))
        #expect(
            (1...6).map(policy.delay(forAttempt:)) == [
                .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2), .seconds(2), .seconds(2),
            ]
        )
    }
}

/// A counter tasks can share.
final class Counter: Sendable {
    private let count = Locked(0)
    var value: Int { count.withLock { $0 } }
    func increment() { count.withLock { $0 += 1 } }
}
