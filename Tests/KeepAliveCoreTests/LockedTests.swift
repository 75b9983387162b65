import KeepAliveCore
import Testing

struct LockedTests {
    /// A closure read back at every message (a gpsd reader's route, a broker's reconnection
    /// handler) stays the closure that was stored. Read with `withLock`, Swift wraps it in two
    /// more reabstraction thunks at each read: the mock gpsd's 20,000-report flood overflowed the
    /// reader thread's stack that way.
    @Test func aStoredClosureReadAtEveryMessageStaysOneCall() {
        let calls = Locked(0)
        let stored = Locked<(@Sendable (Int) -> Void)?>({ _ in calls.withLock { $0 += 1 } })
        for message in 0..<300_000 { stored.read { $0 }?(message) }
        #expect(calls.withLock { $0 } == 300_000)
    }
}
