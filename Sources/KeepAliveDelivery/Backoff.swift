import KeepAliveCore

/// Exponential backoff with jitter and a cap: the n-th retry waits between half and all of
/// `minimum * 2^(n-1)`, never more than `maximum`.
struct Backoff: Sendable {
    let minimum: Duration
    let maximum: Duration

    func delay(forAttempt attempt: Int, jitter: Double = Double.random(in: 0.5...1)) -> Duration {
        let doublings = min(max(attempt - 1, 0), 30)
        let full = min(maximum.seconds, minimum.seconds * Double(1 << doublings))
        return .milliseconds(Int64((max(minimum.seconds, full * jitter) * 1000).rounded()))
    }
}
