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

/// Yields until a condition holds, failing after many turns instead of hanging.
public func waitUntil(_ condition: () -> Bool, sourceLocation: SourceLocation = #_sourceLocation) async throws {
    for _ in 0..<100_000 {
        if condition() { return }
        await Task.yield()
    }
    Issue.record("condition never held", sourceLocation: sourceLocation)
}
