import KeepAliveCore
@testable import KeepAliveService
import KeepAliveSleep
import Testing

/// The periodic work each strategy wakes the sleeping device for: the hybrid's poll at its
/// interval, the monitoring check and the scheduled refresh as often as their budget (the one
/// set, or the default) allows, and work set by hand left as it is.
struct ServiceSleepWorkTests {
    private func configuration(_ strategy: KeepAliveStrategyKind, budgets: [WakeKind: WakeBudget] = [:]) -> KeepAliveService.Configuration {
        var configuration = KeepAliveService.Configuration()
        configuration.strategy = strategy
        var sleep = DeviceSleepKeeper.Configuration()
        for (kind, budget) in budgets { sleep.options.budgets[kind] = budget }
        configuration.deviceSleep = sleep
        return configuration
    }

    @Test func eachStrategyWakesForItsWorkAsItsBudgetAllows() throws {
        let hybrid = try #require(configuration(.hybrid).deviceSleepWithWork)
        #expect(hybrid.options.every == [.poll: HybridKeepAliveMachine.Options().interval])
        #expect(try #require(configuration(.monitoring).deviceSleepWithWork).options.every == [.monitoring: .seconds(300)])
        let set = configuration(.monitoring, budgets: [.monitoring: WakeBudget(burst: 1, interval: .seconds(60))])
        #expect(try #require(set.deviceSleepWithWork).options.every == [.monitoring: .seconds(60)])
        let refresh = configuration(.scheduledRefresh, budgets: [.refresh: WakeBudget(burst: 2, interval: .seconds(120))])
        #expect(try #require(refresh.deviceSleepWithWork).options.every == [.refresh: .seconds(120)])
    }

    @Test func workSetByHandAndAServiceThatDoesNotFollowTheSleepAreLeftAlone() {
        var configuration = configuration(.hybrid)
        configuration.deviceSleep?.options.every[.poll] = .seconds(7)
        #expect(configuration.deviceSleepWithWork?.options.every == [.poll: .seconds(7)])
        configuration.deviceSleep = nil
        #expect(configuration.deviceSleepWithWork == nil)
    }
}
