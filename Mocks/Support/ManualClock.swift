import KeepAliveCore

/// A clock that moves only when the test moves it, and tells who is asleep on it.
///
/// Timeouts, backoffs and silences of a component that does real I/O (a gpsd connection, a
/// socket) are proven on it without a real-time bound: the test waits until the component
/// sleeps, checks when it wants to wake, and moves the clock there. A loaded machine makes the
/// test slower, never wrong.
///
/// ```swift
/// let clock = ManualClock()
/// let source = GPSDSource(port: gpsd.port, silenceTimeout: .seconds(1), clock: clock)
/// // ... once the source is connected and silent, it waits for one second of silence:
/// #expect(await clock.waitForSleeper(wakingAt: .seconds(1)))
/// await clock.advance(to: .seconds(1))
/// ```
public final class ManualClock: Clock, Sendable {
    /// A moment on the clock: the time since it was made.
    public struct Instant: InstantProtocol {
        /// The time since the clock was made.
        public var offset: Duration

        /// The moment `offset` after the clock was made.
        public init(offset: Duration) { self.offset = offset }

        /// The moment `duration` later.
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }

        /// The time from this moment to `other`.
        public func duration(to other: Instant) -> Duration { other.offset - offset }

        /// Whether `lhs` comes before `rhs`.
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        let id: Int
        let deadline: Instant
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [Sleeper] = []
        var nextID = 0
        /// Sleeps cancelled before they were registered.
        var cancelled: Set<Int> = []
    }

    private let state = Locked(State())

    /// A clock at zero, with nobody asleep.
    public init() {}

    /// The clock's time; it changes only in ``advance(by:)`` and ``advance(to:)``.
    public var now: Instant { state.withLock { $0.now } }

    /// Zero: the clock moves only when told.
    public var minimumResolution: Duration { .zero }

    /// Sleeps until the clock is moved to `deadline` or past it; at once if it is there already.
    /// Throws `CancellationError` when the task is cancelled.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome: Result<Void, any Error>? = state.withLock { state in
                    if state.cancelled.remove(id) != nil { return .failure(CancellationError()) }
                    guard deadline > state.now else { return .success(()) }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let isRegistered = state.withLock { state in
                if state.sleepers.contains(where: { $0.id == id }) { return true }
                state.cancelled.insert(id)
                return false
            }
            if isRegistered { wake(where: { $0.id == id }, throwing: CancellationError()) }
        }
        try Task.checkCancellation()
    }

    /// When the sleepers wake, earliest first, as times since the clock was made.
    public var wakes: [Duration] {
        state.withLock { $0.sleepers.map(\.deadline.offset).sorted() }
    }

    /// Waits in real time, up to `patience`, until somebody sleeps until `offset` after the clock
    /// was made; `false` if nobody did by then.
    public func waitForSleeper(wakingAt offset: Duration, patience: Duration = .seconds(60)) async -> Bool {
        let deadline = ContinuousClock.now + patience
        while !wakes.contains(offset) {
            if ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return true
    }

    /// Moves the clock `duration` on, waking every sleeper due by then.
    public func advance(by duration: Duration) async {
        await advance(to: now.offset + duration)
    }

    /// Moves the clock to `offset` after it was made (never back), waking every sleeper due by then.
    public func advance(to offset: Duration) async {
        state.withLock { state in state.now = Instant(offset: max(state.now.offset, offset)) }
        let now = self.now
        wake(where: { $0.deadline <= now }, throwing: nil)
        await Task.yield()
    }

    private func wake(where isWoken: (Sleeper) -> Bool, throwing error: (any Error)?) {
        let woken = state.withLock { state in
            let woken = state.sleepers.filter(isWoken)
            state.sleepers.removeAll(where: isWoken)
            return woken
        }
        for sleeper in woken.sorted(by: { $0.deadline < $1.deadline }) {
            if let error { sleeper.continuation.resume(throwing: error) } else { sleeper.continuation.resume() }
        }
    }
}
