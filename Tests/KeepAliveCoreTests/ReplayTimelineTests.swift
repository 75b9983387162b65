import Clocks
import Foundation
import KeepAliveCore
import LocationKeepAliveMocks
import Testing

/// A replay is one receiver playing one log: every session and one-shot sees the log's
/// current moment, on a test clock.
@Suite(.timeLimit(.minutes(3))) struct ReplayTimelineTests {
    private let ublox = NMEAFixture("ublox-8.log").url  // 72 fixes, one a second, from 00:09:41

    @Test func pollsTenSecondsApartGetFixesTenSecondsApartInTheLog() async throws {
        let clock = TestClock<Duration>()
        let source = NMEAReplaySource(file: ublox, speed: 1, clock: clock)
        try source.start()
        let manager = LocationManager(source: source, clock: clock)
        var times: [Date] = []
        for _ in 0..<6 {
            let fix = try await manager.requestLocation(timeout: .seconds(5))
            times.append(try #require(fix.timestamp))
            await clock.advance(by: .seconds(10))
        }
        let offsets = times.map { $0.timeIntervalSince(times[0]) }
        #expect(offsets == [0, 10, 20, 30, 40, 50])
        #expect(Set(times).count == 6)
    }

    @Test func aSessionStartedAgainGoesOnWhereTheLogIs() async throws {
        let clock = TestClock<Duration>()
        let source = NMEAReplaySource(file: ublox, speed: 1, clock: clock)
        let first = Collected()
        let reader = Task { for try await case .report(let report) in source.events() { first.append(report) } }
        try await waitUntil { first.count == 1 }
        for expected in 2...4 {
            await clock.advance(by: .seconds(1))
            try await waitUntil { first.count == expected }
        }
        reader.cancel()
        _ = await reader.result
        await clock.advance(by: .seconds(5))  // nobody listens: the log plays on

        let second = Collected()
        let again = Task { for try await case .report(let report) in source.events() { second.append(report) } }
        try await waitUntil { second.count == 1 }
        await clock.advance(by: .seconds(1))
        try await waitUntil { second.count == 2 }
        again.cancel()
        let start = try #require(first.times.first)
        #expect(first.times.map { $0.timeIntervalSince(start) } == [0, 1, 2, 3])
        #expect(second.times.map { $0.timeIntervalSince(start) } == [8, 9])
    }

    @Test func aOneShotBeforeTheFirstFixWaitsForItInsteadOfFailing() async throws {
        // beidou-bd.log begins with epochs without a fix.
        let clock = TestClock<Duration>()
        let source = NMEAReplaySource(file: NMEAFixture("beidou-bd.log").url, speed: 1, clock: clock)
        let manager = LocationManager(source: source, clock: clock)
        let request = Task { try await manager.requestLocation(timeout: .seconds(30)) }
        let fix = try await value(of: request, advancing: clock, by: .milliseconds(500))
        #expect(fix.latitude > 31 && fix.latitude < 32)
        // A second one-shot later is later in the log, not the first fix again.
        await clock.advance(by: .seconds(2))
        let later = try await manager.requestLocation(timeout: .seconds(5))
        #expect(try #require(later.timestamp) > #require(fix.timestamp))
    }

    @Test func asFastAsPossibleHandsEveryFixOutOnceAcrossSessions() async throws {
        let source = NMEAReplaySource(file: ublox, speed: 0)
        var first: [Date] = []
        for try await case .report(let report) in source.events() {
            first.append(try #require(report.time))
            if first.count == 10 { break }
        }
        var rest: [Date] = []
        var finished = false
        for try await event in source.events() {
            switch event {
            case .report(let report): rest.append(try #require(report.time))
            case .status(.replayFinished): finished = true
            case .status: break
            }
        }
        let all = first + rest
        #expect(all.count == 72 && finished)
        #expect(zip(all, all.dropFirst()).allSatisfy { $0 < $1 })
        // After the end, a new session hears that the log has ended, and nothing else.
        var late: [SourceEvent] = []
        for try await event in source.events() { late.append(event) }
        #expect(late.count == 1 && late.allSatisfy { if case .status(.replayFinished) = $0 { true } else { false } })
    }

    @Test func loopingStartsAgainWithTimesThatKeepIncreasing() async throws {
        let source = NMEAReplaySource(file: NMEAFixture.mt3339.url, speed: 0, loops: true)  // 30 fixes, 29 s
        var times: [Date] = []
        var passes: [Int] = []
        for try await event in source.events() {
            switch event {
            case .report(let report): if let time = report.time { times.append(time) }
            case .status(.replayLooped(let pass, let shift)):
                passes.append(pass)
                #expect(shift == .seconds(30 * (pass - 1)))
            case .status: break
            }
            if times.count == 75 { break }
        }
        #expect(passes == [2, 3])
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 })
        #expect(times[30].timeIntervalSince(times[29]) == 1)  // one pause between passes
    }

    @Test func loopingAtRecordedSpeedKeepsTheClockGoing() async throws {
        let clock = TestClock<Duration>()
        let source = NMEAReplaySource(file: NMEAFixture.mt3339.url, speed: 1, loops: true, clock: clock)
        try source.start()
        await clock.advance(by: .seconds(95))  // three passes of 30 s, 5 s into the fourth
        let manager = LocationManager(source: source, clock: clock)
        let fix = try await manager.requestLocation(timeout: .seconds(5))
        let first = Date(timeIntervalSince1970: 1_428_956_800)  // 2015-04-13T20:26:40Z, the log's first fix
        #expect(try #require(fix.timestamp).timeIntervalSince(first) == 95)
    }
}

/// Reports a reader collected, readable from the test.
final class Collected: Sendable {
    private let reports = Locked<[FixReport]>([])
    var count: Int { reports.withLock { $0.count } }
    var times: [Date] { reports.withLock { $0.compactMap(\.time) } }
    func append(_ report: FixReport) { reports.withLock { $0.append(report) } }
}
