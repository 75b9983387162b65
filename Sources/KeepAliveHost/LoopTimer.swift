import Dispatch
import KeepAliveCore

/// What wakes the host's loop.
enum LoopInput: Sendable, Equatable {
    /// The deadline the machine armed came.
    case deadline
    /// The kernel told that an app's first process ended.
    case exited
    /// ``AppHost/shutDown()``.
    case stop
}

/// The host loop's one timer: a Dispatch source on a queue of its own, armed for the machine's
/// next deadline; each firing is an input of the loop. Re-arming replaces the deadline.
/// Unchecked: a Dispatch source is thread-safe (scheduled and cancelled from any thread).
final class LoopTimer: @unchecked Sendable {
    private let source: any DispatchSourceTimer

    /// A timer that calls `fire` (on its own queue) at each deadline it is armed for.
    init(fire: @escaping @Sendable () -> Void) {
        source = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "keepalive.host.loop-timer"))
        source.setEventHandler(handler: fire)
        source.schedule(deadline: .distantFuture)
        source.resume()
    }

    deinit { source.cancel() }

    /// Fires once, `delay` from now (at once when it has passed; never, for the machine's
    /// "nothing is due", past what Dispatch counts).
    func arm(after delay: Duration) {
        source.schedule(deadline: .now() + max(delay, .zero).dispatchInterval, leeway: .milliseconds(1))
    }

    /// Fires no more.
    func cancel() { source.cancel() }
}
