public import Foundation
public import KeepAliveCore

/// A location source a test drives by hand: it sends reports and statuses, fails starts,
/// and counts sessions, with no gpsd and no file.
///
/// ```swift
/// let source = ScriptedLocationSource()
/// let manager = LocationManager(source: source, clock: TestClock())
/// let updates = manager.updates()
/// await source.waitForSessions(1)
/// source.sendFix(latitude: 52.1, longitude: 4.3, accuracy: 5, at: date)
/// ```
public final class ScriptedLocationSource: LocationSource {
    private struct State {
        var sessions: [Int: AsyncThrowingStream<SourceEvent, any Error>.Continuation] = [:]
        var started = 0
        var ended = 0
        var nextStartError: (any Error)?
        var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
        var clock: Date?
        var rests = false
    }

    private let state = Locked(State())

    /// A source with no session yet; fixes are sent by the test.
    public init() {}

    /// Sessions started so far (each is one gpsd watch, in the real thing).
    public var sessionsStarted: Int { state.withLock { $0.started } }
    /// Sessions whose consumer went away.
    public var sessionsEnded: Int { state.withLock { $0.ended } }
    /// Sessions running now.
    public var activeSessions: Int { state.withLock { $0.sessions.count } }

    /// The source's own clock, against which the manager measures fix ages; `nil` (the default)
    /// leaves them to the manager's wall clock, as a live receiver does. Set it to stand in for
    /// a replay's clock.
    public var currentDate: Date? {
        get { state.withLock { $0.clock } }
        set { state.withLock { $0.clock = newValue } }
    }

    /// Whether it stands in for a receiver that rests while unwatched (gpsd), so that a
    /// `LocationMonitor` pauses on it while stationary. `false` (the default): like a replay,
    /// never paused on, and a monitor ends when the script finishes.
    public var restsWhenUnwatched: Bool {
        get { state.withLock { $0.rests } }
        set { state.withLock { $0.rests = newValue } }
    }

    /// Starts a session: what the test sends from now on, until it finishes or fails the source.
    public func events() -> AsyncThrowingStream<SourceEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: SourceEvent.self)
        let ready: [CheckedContinuation<Void, Never>] = state.withLock { state in
            state.started += 1
            let id = state.started
            if let error = state.nextStartError {
                state.nextStartError = nil
                continuation.finish(throwing: error)
            } else {
                state.sessions[id] = continuation
                continuation.onTermination = { [weak self] _ in
                    self?.state.withLock { state in
                        if state.sessions.removeValue(forKey: id) != nil { state.ended += 1 }
                    }
                }
            }
            let started = state.started
            let due = state.waiters.filter { $0.count <= started }.map(\.continuation)
            state.waiters.removeAll { $0.count <= started }
            return due
        }
        ready.forEach { $0.resume() }
        return stream
    }

    /// Waits until at least `count` sessions have started.
    public func waitForSessions(_ count: Int) async {
        await withCheckedContinuation { continuation in
            let isDone = state.withLock { state in
                if state.started >= count { return true }
                state.waiters.append((count, continuation))
                return false
            }
            if isDone { continuation.resume() }
        }
    }

    /// The next session ends at once with this error (gpsd unreachable, say).
    public func failNextStart(with error: any Error) {
        state.withLock { $0.nextStartError = error }
    }

    /// Sends an event to every running session.
    public func send(_ event: SourceEvent) {
        let sessions = state.withLock { Array($0.sessions.values) }
        for session in sessions { session.yield(event) }
    }

    /// Sends a 3D fix.
    public func sendFix(
        latitude: Double,
        longitude: Double,
        accuracy: Double? = nil,
        at time: Date? = nil
    ) {
        let location = Location(
            latitude: latitude,
            longitude: longitude,
            horizontalAccuracy: accuracy,
            timestamp: time,
            mode: .threeDimensional,
            device: "scripted"
        )
        send(.report(FixReport(mode: .threeDimensional, time: time, location: location)))
    }

    /// Sends a report saying the receiver has no fix.
    public func sendNoFix(at time: Date? = nil) {
        send(.report(FixReport(mode: .noFix, time: time)))
    }

    /// Ends every running session, normally or with an error.
    public func finish(throwing error: (any Error)? = nil) {
        let sessions = state.withLock { Array($0.sessions.values) }
        for session in sessions { session.finish(throwing: error) }
    }
}
