package import Testing
import TestWaiting

/// Waits until `condition` holds, failing after `timeout` (scaled): TestWaiting's
/// `waitUntil(within:asking:)`, for a condition that may itself wait (a command's answer).
package func waitUntil(
    timeout: Duration,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: () async throws -> Bool
) async throws {
    try await TestWaiting.waitUntil(within: timeout, sourceLocation: sourceLocation, asking: condition)
}
