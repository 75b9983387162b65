package import Dispatch

/// The real clock: `ContinuousClock`'s time, with sleeps on Dispatch timers.
///
/// On Linux a task sleeping on `ContinuousClock` keeps the dispatch manager thread waking once
/// a second for as long as it sleeps (Swift 6.3: a 60 s `Task.sleep` is about 60 timer re-arms);
/// a Dispatch timer wakes once, when it is due, and a cancelled one is removed instead of firing
/// later for nothing. A service sleeps most of its life, so this is its default clock; tests
/// inject their own. (libdispatch's worker monitor still ticks once a second while the process
/// has threads in the shared pool: `Benchmarks/HISTORY.md`.)
///
/// A sleep counts on the monotonic clock Dispatch uses, which stops while the machine is
/// suspended: after a system suspend a sleep ends that much later than on `ContinuousClock`.
public struct DispatchClock: Clock {
    /// `ContinuousClock`'s instants: the two clocks' times compare and mix.
    public typealias Instant = ContinuousClock.Instant

    /// The real clock.
    public init() {}

    /// Now, on `ContinuousClock`.
    public var now: Instant { .now }

    /// `ContinuousClock`'s resolution.
    public var minimumResolution: Duration { ContinuousClock().minimumResolution }

    /// Sleeps until `deadline` (within `tolerance`, the timer's leeway); throws
    /// `CancellationError` at once when the task is cancelled.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        let remaining = Instant.now.duration(to: deadline)
        guard remaining > .zero else { return }
        let timer = SleepTimer()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                timer.start(continuation, after: remaining, leeway: tolerance)
            }
        } onCancel: {
            timer.cancel()
        }
    }
}

/// One sleep: a continuation resumed once, by its timer or by cancellation, whichever comes
/// first. A cancelled sleep cancels its timer source, so no wake-up is left behind for it.
private final class SleepTimer: Sendable {
    private enum State {
        case waiting
        case sleeping(CheckedContinuation<Void, any Error>, TimerSource)
        case cancelled
        case done
    }

    /// Unchecked: a Dispatch source is thread-safe (it is scheduled, resumed and cancelled from
    /// any thread: dispatch_source_create(3)); only its protocol type is not marked Sendable.
    struct TimerSource: @unchecked Sendable {
        let source: any DispatchSourceTimer
    }

    private let state = Locked(State.waiting)

    func start(_ continuation: CheckedContinuation<Void, any Error>, after delay: Duration, leeway: Duration?) {
        let timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(
            deadline: .now() + delay.dispatchInterval,
            repeating: .never,
            leeway: max(leeway ?? .zero, .zero).dispatchInterval
        )
        timer.setEventHandler { [self] in finish(throwing: nil) }
        let started = state.withLock { state in
            guard case .waiting = state else { return false }  // cancelled before it started
            state = .sleeping(continuation, TimerSource(source: timer))
            return true
        }
        // Resumed either way: Dispatch traps on releasing a source that was never resumed.
        defer { timer.resume() }
        guard started else {
            timer.cancel()
            return continuation.resume(throwing: CancellationError())
        }
    }

    func cancel() { finish(throwing: CancellationError()) }

    private func finish(throwing error: (any Error)?) {
        let taken = state.withLock { state -> (CheckedContinuation<Void, any Error>, TimerSource)? in
            switch state {
            case .waiting:
                state = .cancelled
                return nil
            case .sleeping(let continuation, let timer):
                state = .done
                return (continuation, timer)
            case .cancelled, .done:
                return nil
            }
        }
        guard let (continuation, timer) = taken else { return }
        timer.source.cancel()
        if let error { continuation.resume(throwing: error) } else { continuation.resume() }
    }

}

extension Duration {
    /// This duration in nanoseconds for Dispatch, or `.never` past what it can count (about 292
    /// years): what a timer after it waits.
    package var dispatchInterval: DispatchTimeInterval {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let (nanoseconds, overflowAgain) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
        return overflow || overflowAgain ? .never : .nanoseconds(Int(nanoseconds))
    }
}
