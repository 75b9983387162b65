import KeepAliveCore
import KeepAliveSimulation
import Testing

/// Scheduled background work in the model, in virtual time: due, conditions, budgets.
@Suite struct ScheduledTaskTests {
    private func backgroundApp(_ modes: BackgroundModes = [.fetch, .processing]) -> Application {
        let app = Application(profile: .ios13, backgroundModes: modes)
        app.launch()
        app.enterBackground()
        app.run(for: .seconds(1))
        return app
    }

    @Test func aRefreshResumesASuspendedAppWhenDueAndItIsSuspendedAgainAfterCompleting() throws {
        let app = backgroundApp()
        #expect(app.state == .suspended)
        var started: Duration?
        app.register(forTaskWithIdentifier: "refresh") { task in
            started = app.now
            app.scheduleTimer(after: .seconds(5)) { task.setTaskCompleted(success: true) }
        }
        try app.submit(BackgroundTaskRequest(identifier: "refresh", earliestBeginDate: .seconds(60)))
        app.run(for: .seconds(58))
        #expect(app.state == .suspended && started == nil)
        app.run(for: .seconds(2))
        #expect(started == .seconds(60) && app.state == .background)
        app.run(for: .seconds(5))
        #expect(app.state == .suspended)
        #expect(app.statistics.suspensions.last?.at == .seconds(65))
        #expect(app.statistics.scheduledTasksRun == 1)
    }

    @Test func aTaskThatNeverCompletesIsWarnedThenSuspendedAtItsBudget() throws {
        let app = backgroundApp()
        var warnedAt: Duration?
        app.register(forTaskWithIdentifier: "slow") { task in task.expirationHandler = { warnedAt = app.now } }
        try app.submit(BackgroundTaskRequest(identifier: "slow", earliestBeginDate: .seconds(10)))
        app.run(for: .seconds(100))
        #expect(warnedAt == .seconds(39))  // 30 s refresh budget, handler 1 s before
        #expect(
            app.statistics.suspensions.last.map { ($0.at, $0.cause) } ?? (.zero, .nothingKeepsItAlive) == (
                .seconds(40), .scheduledTaskExpired
            )
        )
    }

    @Test func processingWaitsForPowerAndStopsWhenItGoesAway() throws {
        let app = backgroundApp()
        app.conditions = SystemConditions(hasExternalPower: false, hasNetwork: true)
        var runs = 0
        var expired = false
        app.register(forTaskWithIdentifier: "index") { task in
            runs += 1
            task.expirationHandler = {
                expired = true
                task.setTaskCompleted(success: false)
            }
        }
        try app.submit(BackgroundTaskRequest(identifier: "index", kind: .processing, requiresExternalPower: true))
        app.run(for: .seconds(60))
        #expect(runs == 0 && app.state == .suspended)
        app.conditions.hasExternalPower = true
        app.run(for: .seconds(1))
        #expect(runs == 1 && app.state == .background)
        app.run(for: .seconds(120))
        #expect(app.state == .background, "processing runs while its conditions hold")
        app.conditions.hasExternalPower = false
        app.run(for: .seconds(1))
        #expect(expired && app.state == .suspended)
    }

    @Test func submittingWithoutTheModeIsAClearError() {
        let app = backgroundApp([.audio])
        let error = #expect(throws: BackgroundError.self) {
            try app.submit(BackgroundTaskRequest(identifier: "x"))
        }
        #expect(error?.message.contains("turn on the fetch background mode") == true)
    }

    @Test func theSimulatorScriptsPowerAndNetwork() throws {
        let script = try SimulationScript(parsing: "0 background\n10m power off\n20m network down\n30m power on\n")
        #expect(script.events.map(\.action.description) == ["background", "power off", "network down", "power on"])
        #expect(throws: SimulationScriptError.self) { try SimulationScript(parsing: "1m power maybe") }
    }
}
