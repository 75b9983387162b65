import KeepAliveCore
@testable import KeepAliveSleep
import Testing

/// A resume during a sleep's preparation (a sleep that did not wait for it): the preparation is
/// cut short, and what it does as it ends (delivery's pause after its drain) comes before the
/// resume, never after it, where it would leave delivery paused until the next sleep.
@Suite(.timeLimit(.minutes(1)))
struct SleepPreparationTests {
    @Test func aResumeCutsThePreparationShortAndComesAfterItsEnd() async {
        let preparation = SleepPreparation()
        let steps = Locked<[String]>([])
        let (started, start) = AsyncStream<Void>.makeStream()
        async let prepared: Void = preparation.run {
            start.finish()
            // Delivery's drain: it waits for a server that never answers, until cancelled.
            let (never, _) = AsyncStream<Void>.makeStream()
            for await _ in never {}
            steps.withLock { $0.append(Task.isCancelled ? "paused, cut short" : "paused") }
        }
        for await _ in started {}
        await preparation.cut()
        steps.withLock { $0.append("resumed") }
        await prepared
        #expect(steps.withLock { $0 } == ["paused, cut short", "resumed"])
    }

    @Test func aPreparationThatEndedIsNotWaitedForAgain() async {
        let preparation = SleepPreparation()
        let steps = Locked<[String]>([])
        await preparation.run { steps.withLock { $0.append("paused") } }
        await preparation.cut()
        steps.withLock { $0.append("resumed") }
        #expect(steps.withLock { $0 } == ["paused", "resumed"])
    }
}
