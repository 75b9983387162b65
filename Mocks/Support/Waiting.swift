public import Clocks
public import Testing

/// Advances a test clock in steps until a condition holds (at most `steps` steps).
public func waitUntil(
    _ condition: () -> Bool,
    advancing clock: TestClock<Duration>,
    by step: Duration,
    steps: Int = 200,
    sourceLocation: SourceLocation = #_sourceLocation
) async {
    for _ in 0..<steps {
        if condition() { return }
        await clock.advance(by: step)
        for _ in 0..<20 { await Task.yield() }
    }
    if !condition() { Issue.record("condition never held", sourceLocation: sourceLocation) }
}

/// Waits until a condition holds, failing after two minutes (a hang) instead of hanging: a
/// bound on time, not on turns, which a test process busy with other tests uses up early.
public func waitUntil(_ condition: () -> Bool, sourceLocation: SourceLocation = #_sourceLocation) async throws {
    let deadline = ContinuousClock.now.advanced(by: .seconds(120))
    var turns = 0
    while ContinuousClock.now < deadline {
        if condition() { return }
        turns += 1
        if turns < 1_000 { await Task.yield() } else { try await Task.sleep(for: .milliseconds(1)) }
    }
    if !condition() { Issue.record("condition never held in 120 s", sourceLocation: sourceLocation) }
}
