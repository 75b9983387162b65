package import Testing

/// Polls `condition` every 10 ms until it holds; fails after `timeout`. The condition may
/// itself wait (a command's answer).
package func waitUntil(
    timeout: Duration,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + Tools.bound(timeout)
    while try await !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("condition did not hold within \(timeout)", sourceLocation: sourceLocation)
            throw CancellationError()
        }
        try await Task.sleep(for: .milliseconds(10))
    }
}
