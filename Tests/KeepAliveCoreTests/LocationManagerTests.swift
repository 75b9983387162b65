import Clocks
import Foundation
import KeepAliveCore
import LocationKeepAliveMocks
import Testing

@Suite(.timeLimit(.minutes(3))) struct LocationManagerTests {
    let source = ScriptedLocationSource()
    let clock = TestClock<Duration>()
    let now = Date(timeIntervalSince1970: 1_700_000_000)

    private func makeManager() -> LocationManager {
        let now = self.now
        return LocationManager(source: source, clock: clock, wallClock: { now })
    }

    @Test func oneShotDeliversTheFirstFixThatMeetsTheAccuracy() async throws {
        let manager = makeManager()
        async let fix = manager.requestLocation(desiredAccuracy: 10, timeout: .seconds(30))
        await source.waitForSessions(1)
        source.sendFix(latitude: 1, longitude: 0, accuracy: 50, at: now)
        source.sendFix(latitude: 2, longitude: 0, accuracy: 8, at: now + 1)
        #expect(try await fix.latitude == 2)
        #expect(source.activeSessions == 0, "the watch stops when its last consumer is served")
    }

    /// A stream keeps its manager alive while it is consumed (`LocationManager(source:).updates()`
    /// in one line, as the testing article writes it: before, the manager went at once and the
    /// stream waited for ever), and lets it go when the consumer drops it.
    @Test func aStreamKeepsItsManagerUntilDropped() async throws {
        weak var released: LocationManager?
        var updates: AsyncThrowingStream<LocationUpdate, any Error>.AsyncIterator? = {
            let manager = makeManager()
            released = manager
            return manager.updates().makeAsyncIterator()
        }()
        #expect(released != nil, "held by its stream")
        await source.waitForSessions(1)
        source.sendFix(latitude: 1, longitude: 0, accuracy: 5, at: now)
        guard case .location(let fix)? = try await updates?.next() else { Issue.record("no fix on the stream"); return }
        #expect(fix.latitude == 1)
        updates = nil
        try await waitUntil { released == nil }
        #expect(released == nil, "let go once the stream was dropped")
    }

    /// A replay that has ended gives a later one-shot nothing: it says so, and where the fixes
    /// it did give are, rather than "no fix seen".
    @Test func aOneShotAfterTheSourceEndedNamesTheLastFixItGave() async throws {
        let manager = makeManager()
        let updates = Task { for try await _ in manager.updates() {} }
        await source.waitForSessions(1)
        source.sendFix(latitude: 1, longitude: 0, accuracy: 5, at: now)
        try await waitUntil { manager.location?.latitude == 1 }
        source.finish()
        try await updates.value
        let request = Task { try await manager.requestLocation(timeout: .seconds(30)) }
        await source.waitForSessions(2)
        source.finish()
        let error = try #require(await #expect(throws: LocationError.self) { try await request.value })
        #expect(error.message.contains("the source ended before a fix met the request; the last fix it gave"))
        #expect(error.message.contains("is the manager's `location`"))
    }

    @Test func oneShotTimesOutWithTheBestFixSeen() async throws {
        let manager = makeManager()
        let request = Task { try await manager.requestLocation(desiredAccuracy: 5, timeout: .seconds(10)) }
        await source.waitForSessions(1)
        source.sendFix(latitude: 1, longitude: 0, accuracy: 50, at: now)
        source.sendFix(latitude: 2, longitude: 0, accuracy: 20, at: now + 1)
        source.sendFix(latitude: 3, longitude: 0, accuracy: 30, at: now + 2)
        await clock.advance(by: .seconds(9))
        source.sendFix(latitude: 4, longitude: 0, accuracy: 40, at: now + 3)
        let error = try #require(
            await #expect(throws: LocationError.self) {
                try await value(of: request, advancing: clock, by: .seconds(1))
            }
        )
        #expect(error.code == .locationUnknown)
        #expect(error.bestLocation?.latitude == 2)
        #expect(error.message.contains("10 s"))
    }

    @Test func cachedFixReturnsAtOnceWhenYoungEnough() async throws {
        let manager = makeManager()
        let updates = manager.updates()
        await source.waitForSessions(1)
        source.sendFix(latitude: 7, longitude: 0, accuracy: 5, at: now - 3)
        var iterator = updates.makeAsyncIterator()
        _ = try await iterator.next()
        let cached = try await manager.requestLocation(
            desiredAccuracy: 10,
            maximumAge: .seconds(5),
            timeout: .seconds(1)
        )
        #expect(cached.latitude == 7)
        #expect(source.sessionsStarted == 1, "the one-shot shares the running watch")
    }

    @Test func oneShotSharesTheRunningWatch() async throws {
        let manager = makeManager()
        let updates = manager.updates()
        await source.waitForSessions(1)
        async let first = manager.requestLocation(timeout: .seconds(5))
        async let second = manager.requestLocation(timeout: .seconds(5))
        try await waitForOneShots()
        source.sendFix(latitude: 1, longitude: 0, at: now)
        #expect(try await first.latitude == 1)
        #expect(try await second.latitude == 1)
        #expect(source.sessionsStarted == 1)
        _ = updates
    }

    @Test func noFixCacheAfterTheFixIsLost() async throws {
        let manager = makeManager()
        let updates = manager.updates()
        await source.waitForSessions(1)
        var iterator = updates.makeAsyncIterator()
        source.sendFix(latitude: 7, longitude: 0, at: now)
        _ = try await iterator.next()
        #expect(manager.location?.latitude == 7)
        source.sendNoFix(at: now + 1)
        #expect(try await iterator.next() == .status(.fixLost))
        #expect(manager.location == nil)
        let request = Task { try await manager.requestLocation(maximumAge: .seconds(60), timeout: .seconds(2)) }
        await #expect(throws: LocationError.self) {
            try await value(of: request, advancing: clock, by: .milliseconds(500))
        }
    }

    @Test func sourceFailureReachesEveryConsumer() async throws {
        source.failNextStart(with: LocationError(.gpsdUnreachable, "cannot reach gpsd at localhost:1"))
        let manager = makeManager()
        let updates = manager.updates()
        let error = try #require(await #expect(throws: LocationError.self) { for try await _ in updates {} })
        #expect(error.code == .gpsdUnreachable)
        // The next consumer tries again.
        source.failNextStart(with: LocationError(.gpsdUnreachable, "still down"))
        await #expect(throws: LocationError.self) { try await manager.requestLocation(timeout: .seconds(5)) }
        #expect(source.sessionsStarted == 2)
    }

    /// A gpsd not there at the start is waited for when asked (`--wait-for-gpsd`): told as a
    /// lost connection and retried with the reconnection's backoff, not thrown at once.
    @Test func aSourceThatWaitsForGPSDRetriesInsteadOfThrowing() async throws {
        let clock = ManualClock()
        let source = GPSDSource(host: "127.0.0.1", port: 1, waitsForGPSD: true, clock: clock)  // nothing listens on 1
        var events = source.events().makeAsyncIterator()
        guard case .status(.connectionLost(let error)) = try await events.next() else {
            Issue.record("not told as a lost connection")
            return
        }
        #expect(error.code == .gpsdUnreachable)
        #expect(try await events.next() == .status(.reconnecting(attempt: 1, delay: .milliseconds(250))))
        #expect(await clock.waitForSleeper(wakingAt: .milliseconds(250)), "the backoff waits on the clock: \(clock.wakes)")
        let failing = GPSDSource(host: "127.0.0.1", port: 1, clock: clock)
        await #expect(throws: LocationError.self) { for try await _ in failing.events() {} }
    }

    @Test func endOfReplayFailsAPendingOneShotAtOnce() async throws {
        let manager = makeManager()
        let request = Task { try await manager.requestLocation(desiredAccuracy: 1, timeout: .seconds(60)) }
        await source.waitForSessions(1)
        source.sendFix(latitude: 1, longitude: 0, accuracy: 3, at: now)
        source.finish()
        let error = try #require(await #expect(throws: LocationError.self) { try await request.value })
        #expect(error.bestLocation?.latitude == 1)
    }

    @Test func severalConsumersGetEveryFixAndTheLastOneOutStopsTheWatch() async throws {
        let manager = makeManager()
        let readA = read(2, from: manager.updates())
        let readB = read(1, from: manager.updates(LocationFilter(desiredAccuracy: 10)))
        await source.waitForSessions(1)
        source.sendFix(latitude: 1, longitude: 0, accuracy: 20, at: now)
        source.sendFix(latitude: 2, longitude: 0, accuracy: 5, at: now + 1)
        #expect(try await readA.value == 2)
        #expect(try await readB.value == 1)
        #expect(source.sessionsStarted == 1)
        try await waitUntil { source.activeSessions == 0 }
    }

    @Test func cancellingAOneShotEndsItsWatch() async throws {
        let manager = makeManager()
        let request = Task { try await manager.requestLocation(timeout: .seconds(60)) }
        await source.waitForSessions(1)
        request.cancel()
        await #expect(throws: CancellationError.self) { try await request.value }
        try await waitUntil { source.activeSessions == 0 }
    }

    @Test func handlerConsumerGetsWhatAStreamGetsAndEndsOnCancel() async throws {
        let manager = makeManager()
        let seen = Locked<[Double]>([])
        let handler = Task {
            try await manager.updates(LocationFilter(desiredAccuracy: 10)) { update in
                if case .location(let fix) = update { seen.withLock { $0.append(fix.latitude) } }
            }
        }
        let stream = read(2, from: manager.updates(LocationFilter(desiredAccuracy: 10)))
        await source.waitForSessions(1)
        source.sendFix(latitude: 1, longitude: 0, accuracy: 20, at: now)
        source.sendFix(latitude: 2, longitude: 0, accuracy: 5, at: now + 1)
        source.sendFix(latitude: 3, longitude: 0, accuracy: 5, at: now + 2)
        #expect(try await stream.value == 2)
        try await waitUntil { seen.withLock { $0 } == [2, 3] }
        handler.cancel()
        try await handler.value  // returns, does not throw
        try await waitUntil { source.activeSessions == 0 }
    }

    @Test func handlerConsumerThrowsWhenTheSourceCannotStart() async throws {
        source.failNextStart(with: LocationError(.gpsdUnreachable, "cannot reach gpsd at localhost:1"))
        let manager = makeManager()
        let error = try #require(
            await #expect(throws: LocationError.self) { try await manager.updates { _ in } }
        )
        #expect(error.code == .gpsdUnreachable)
    }

    @Test func rejectsANonPositiveTimeout() async {
        let manager = makeManager()
        await #expect(throws: LocationError.self) { try await manager.requestLocation(timeout: .zero) }
    }

    /// Reads `count` fixes in a task that owns the stream, so the stream ends with the task.
    private func read(
        _ count: Int,
        from updates: AsyncThrowingStream<LocationUpdate, any Error>
    ) -> Task<Int, any Error> {
        Task {
            var seen = 0
            for try await case .location in updates {
                seen += 1
                if seen == count { break }
            }
            return seen
        }
    }

    /// Lets queued tasks run (no sleeping): the one-shots register before the fix is sent.
    private func waitForOneShots() async throws {
        for _ in 0..<100 { await Task.yield() }
    }
}

/// Advances a test clock in steps until `task` finishes (at most `steps` steps), then returns its
/// value: robust against a task that registers its sleep after the first advance.
func value<T: Sendable>(
    of task: Task<T, any Error>,
    advancing clock: TestClock<Duration>,
    by step: Duration,
    steps: Int = 200
) async throws -> T {
    let done = Locked(false)
    let watcher = Task {
        _ = try? await task.value
        done.withLock { $0 = true }
    }
    for _ in 0..<steps where !done.withLock({ $0 }) {
        await clock.advance(by: step)
        await Task.yield()
    }
    watcher.cancel()
    return try await task.value
}
