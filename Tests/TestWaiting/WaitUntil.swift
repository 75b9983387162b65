import Glibc
import Synchronization
package import Testing

/// A wait that ran out: what was waited for, and for how long.
package struct WaitTimedOut: Error, CustomStringConvertible {
    package let what: String
    package let timeout: Duration
    package var description: String { "\(what) did not happen within \(timeout) (scaled by KEEPALIVE_TEST_TIME_SCALE)" }
}

/// Waits until `condition` holds, looking at it every 5 ms on a thread of its own, not on the
/// concurrency pool: a pool kept busy by the tests beside this one neither delays the look nor
/// uses up the deadline. Records an issue and throws ``WaitTimedOut`` after `timeout` (scaled,
/// ``TestTime/bound(_:)``): a hang, since the wait ends as soon as the condition holds.
package func waitUntil(
    _ what: String = "the condition",
    within timeout: Duration = TestTime.patience,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: @escaping @Sendable () -> Bool
) async throws {
    guard try await holds(within: timeout, condition) else {
        let failure = WaitTimedOut(what: what, timeout: TestTime.bound(timeout))
        Issue.record("\(failure)", sourceLocation: sourceLocation)
        throw failure
    }
}

/// Whether `condition` comes to hold within `timeout` (scaled), looked at every 5 ms (or
/// `every`: a condition that opens files) on a thread of its own (see
/// ``waitUntil(_:within:sourceLocation:_:)``); false at the deadline, and at once when the task
/// is cancelled. For a test that asserts the answer itself.
package func holds(
    within timeout: Duration, every interval: Duration = .milliseconds(5), _ condition: @escaping @Sendable () -> Bool
) async throws -> Bool {
    let pause = useconds_t(interval.components.seconds * 1_000_000 + interval.components.attoseconds / 1_000_000_000_000)
    let deadline = ContinuousClock.now + TestTime.bound(timeout)
    let cancelled = CancelFlag()
    let held = await withTaskCancellationHandler {
        await onOwnThread {
            while !condition() {
                guard ContinuousClock.now < deadline, !cancelled.isSet else { return condition() }
                usleep(pause)
            }
            return true
        }
    } onCancel: {
        cancelled.set()
    }
    try Task.checkCancellation()
    return held
}

/// Waits until the async `condition` holds (a command's answer, an actor's state), asking it
/// again every 10 ms; for a condition that can be read without the pool, use
/// ``waitUntil(_:within:sourceLocation:_:)``. The deadline is a time (`timeout`, scaled), never a
/// count of turns, which a busy pool uses up early.
package func waitUntil(
    _ what: String = "the condition",
    within timeout: Duration = TestTime.patience,
    sourceLocation: SourceLocation = #_sourceLocation,
    asking condition: () async throws -> Bool
) async throws {
    guard try await holds(within: timeout, asking: condition) else {
        let failure = WaitTimedOut(what: what, timeout: TestTime.bound(timeout))
        Issue.record("\(failure)", sourceLocation: sourceLocation)
        throw failure
    }
}

/// Whether the async `condition` comes to hold within `timeout` (scaled), asked every 10 ms
/// (see ``waitUntil(_:within:sourceLocation:asking:)``); false at the deadline. Throws what the
/// condition throws, and `CancellationError` when the task is cancelled.
package func holds(within timeout: Duration, asking condition: () async throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + TestTime.bound(timeout)
    while try await !condition() {
        guard ContinuousClock.now < deadline else { return false }
        try await Task.sleep(for: .milliseconds(10))
    }
    return true
}

/// A flag set once, from any thread.
final class CancelFlag: Sendable {
    private let value = Atomic(false)
    var isSet: Bool { value.load(ordering: .acquiring) }
    func set() { value.store(true, ordering: .releasing) }
}
