import KeepAliveCore
import Testing

/// An app woken for a location event, in the model, in virtual time: it runs for the event
/// budget, then the policy suspends it again; a second event in the budget extends it.
@Suite struct LocationEventWakeTests {
    private func suspendedApp() -> Application {
        let app = Application(profile: .ios13, authorization: .always)
        app.launch()
        app.enterBackground()
        app.run(for: .seconds(1))
        return app
    }

    @Test func aSuspendedAppRunsForTheEventBudgetThenIsSuspendedAgain() {
        let app = suspendedApp()
        #expect(app.state == .suspended)
        var events: [AppEvent] = []
        app.addObserver { events.append($0) }
        app.wakeForLocationEvent()
        #expect(app.state == .background && events == [.resumed])
        app.run(for: .milliseconds(9_999))
        #expect(app.state == .background, "10 s, as iOS gives")
        app.run(for: .milliseconds(1))
        #expect(app.state == .suspended)
        #expect(app.statistics.suspensions.last?.at == .seconds(11))
        #expect(app.statistics.suspensions.last?.cause == .eventHandled)
    }

    @Test func anEventInTheBudgetExtendsItFromItsOwnTime() {
        let app = suspendedApp()
        app.wakeForLocationEvent()
        app.run(for: .seconds(6))
        app.wakeForLocationEvent()
        app.run(for: .milliseconds(9_999))
        #expect(app.state == .background)
        app.run(for: .milliseconds(1))
        #expect(app.state == .suspended && app.statistics.suspensions.last?.at == .seconds(17))
    }

    @Test func aForegroundOrStoppedAppIsNotMoved() {
        let app = Application(profile: .ios13, authorization: .always)
        app.wakeForLocationEvent()
        #expect(app.state == .notRunning)
        app.launch()
        app.wakeForLocationEvent()
        #expect(app.state == .active)
        app.run(for: .seconds(60))
        #expect(app.state == .active)
    }

    @Test func theProfilesBudgetIsUsed() {
        var profile = ExecutionProfile.ios13
        profile.eventBudget = .seconds(3)
        let app = Application(profile: profile, authorization: .always)
        app.launch()
        app.enterBackground()
        app.run(for: .seconds(1))
        app.wakeForLocationEvent()
        app.run(for: .seconds(3))
        #expect(app.state == .suspended && app.statistics.suspensions.last?.at == .seconds(4))
    }
}
