/// How long to wait before each reconnection attempt: exponential, capped.
public struct ReconnectPolicy: Sendable, Hashable {
    /// The first delay.
    public var initialDelay: Duration
    /// The growth factor between attempts.
    public var multiplier: Double
    /// The cap.
    public var maximumDelay: Duration

    /// Waits from `initialDelay`, times `multiplier` each attempt, up to `maximumDelay`.
    public init(
        initialDelay: Duration = .milliseconds(250),
        multiplier: Double = 2,
        maximumDelay: Duration = .seconds(8)
    ) {
        self.initialDelay = initialDelay
        self.multiplier = multiplier
        self.maximumDelay = maximumDelay
    }

    /// The delay before attempt `attempt` (1 for the first retry).
    public func delay(forAttempt attempt: Int) -> Duration {
        let factor = Glibc.pow(multiplier, Double(max(0, attempt - 1)))
        let delay = initialDelay * factor
        return delay > maximumDelay ? maximumDelay : delay
    }
}

import Glibc
