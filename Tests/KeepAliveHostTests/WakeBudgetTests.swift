import KeepAliveCore
import KeepAliveHost
import Testing

/// The wake budget's rule on a test clock: a burst at once, then one wake each interval, a
/// wake planned later counted at its time, never more than the burst after a long quiet.
struct WakeBudgetTests {
    @Test func pushesAreTwoAtOnceThenOneEachTwentyMinutes() {
        var budget = WakeBudget.data
        let start = Duration.seconds(5)
        #expect(budget.remaining(at: start) == 2)
        budget.spend(at: start)
        #expect(budget.allows(at: start))
        budget.spend(at: start)
        #expect(!budget.allows(at: start + .seconds(1)))
        #expect(budget.remaining(at: start + .seconds(1)) == 0)
        #expect(budget.nextWake(from: start + .seconds(1)) == start + .seconds(20 * 60))
        #expect(budget.allows(at: start + .seconds(20 * 60)))
        // Over an hour of data every 200 ms: the burst, then three an hour.
        var wakes = 0
        var sampled = WakeBudget.data
        for tick in stride(from: Int64(0), to: 3_600_000, by: 200) where sampled.allows(at: .milliseconds(tick)) {
            sampled.spend(at: .milliseconds(tick))
            wakes += 1
        }
        #expect(wakes == 2 + 2, "two at once, then one at 20 and at 40 minutes: \(wakes)")
    }

    @Test func aLongQuietGivesBackTheBurstAndNoMore() {
        var budget = WakeBudget(burst: 3, interval: .seconds(60))
        for _ in 0..<3 { budget.spend(at: .zero) }
        #expect(budget.remaining(at: .seconds(30)) == 0)
        #expect(budget.remaining(at: .seconds(60)) == 1)
        #expect(budget.remaining(at: .seconds(10_000)) == 3)
        budget.spend(at: .seconds(10_000))
        #expect(budget.remaining(at: .seconds(10_000)) == 2)
    }

    @Test func aWakePlannedLaterCountsAtItsTime() {
        var budget = WakeBudget(burst: 1, interval: .seconds(600))
        budget.spend(at: .seconds(0))
        let planned = budget.nextWake(from: .seconds(10))
        #expect(planned == .seconds(600))
        budget.spend(at: planned)
        #expect(budget.nextWake(from: .seconds(20)) == .seconds(1_200))
    }
}
