import KeepAliveCore
import KeepAliveSimulation
import Testing

/// The execution model itself, in virtual time.
@Suite struct ApplicationTests {
    private func makeApp(
        _ profile: ExecutionProfile = .ios13,
        modes: BackgroundModes = [.audio, .location]
    ) -> Application {
        let app = Application(profile: profile, backgroundModes: modes, authorization: .always)
        app.launch()
        return app
    }

    private func events(of app: Application) -> () -> [AppEvent] {
        var events: [AppEvent] = []
        app.addObserver { events.append($0) }
        return { events }
    }

    @Test func launchesThroughInactiveToActive() {
        let app = Application()
        let seen = events(of: app)
        app.launch()
        #expect(app.state == .active)
        #expect(seen() == [.didFinishLaunching, .didBecomeActive])
    }

    @Test func aBackgroundLaunchIsNeverActiveAndItsBudgetStarts() {
        let app = Application(profile: .ios13, backgroundModes: [], authorization: .always)
        let seen = events(of: app)
        app.launchInBackground()
        #expect(app.state == .background)
        #expect(seen() == [.didFinishLaunching, .didEnterBackground])
        #expect(app.backgroundTimeRemaining == .seconds(30))
        app.launchInBackground()
        app.launch()
        #expect(seen().count == 2, "a running app is not launched again")
    }

    @Test func backgroundWithNoTaskSuspendsAtTheNextTurnAndTimersCoalesce() {
        let app = makeApp()
        var fired: [Duration] = []
        app.scheduleTimer(after: .seconds(1), repeating: .seconds(1)) { fired.append(app.now) }
        app.run(for: .seconds(3))
        #expect(fired == [.seconds(1), .seconds(2), .seconds(3)])
        app.enterBackground()
        #expect(app.state == .background, "didEnterBackground handlers still run")
        app.run(for: .zero)
        #expect(app.state == .suspended)
        #expect(app.statistics.suspensions == [.init(at: .seconds(3), cause: .nothingKeepsItAlive)])
        app.run(for: .seconds(60))
        #expect(fired.count == 3, "a suspended app's timer does not fire")
        app.enterForeground()
        #expect(fired == [.seconds(1), .seconds(2), .seconds(3), .seconds(63)], "overdue: once, coalesced")
        app.run(for: .seconds(2))
        #expect(fired.suffix(2) == [.seconds(64), .seconds(65)])
    }

    @Test(arguments: [(ExecutionProfile.ios13, 30), (ExecutionProfile.ios12, 180)])
    func aTaskEndedInItsExpirationHandlerRunsUntilTheBudgetEnds(profile: ExecutionProfile, budget: Int) {
        let app = makeApp(profile)
        var handlerRanAt: Duration?
        var task = BackgroundTaskIdentifier.invalid
        app.enterBackground()
        task = app.beginBackgroundTask(named: "upload") {
            handlerRanAt = app.now
            app.endBackgroundTask(task)
        }
        #expect(app.backgroundTimeRemaining == .seconds(budget))
        app.run(for: .seconds(budget) - .milliseconds(1))
        #expect(app.state == .background)
        #expect(handlerRanAt == .seconds(budget - 1), "the default lead time is 1 s")
        app.run(for: .milliseconds(1))
        #expect(app.state == .suspended)
        #expect(app.statistics.suspensions == [.init(at: .seconds(budget), cause: .backgroundTimeExpired)])
    }

    @Test func aTaskNeverEndedGetsTheAppTerminatedWithTheReason() {
        let app = makeApp()
        app.enterBackground()
        _ = app.beginBackgroundTask(named: "forgotten")
        app.run(for: .seconds(31))
        #expect(app.state == .notRunning)
        let termination = app.statistics.termination
        #expect(termination?.at == .seconds(30))
        #expect(termination?.reason == .backgroundTaskNotEnded(name: "forgotten"))
    }

    @Test func tasksShareOneBudgetPerBackgroundEntry() {
        let app = makeApp()
        app.enterBackground()
        let first = app.beginBackgroundTask(named: "first")
        app.run(for: .seconds(20))
        let second = app.beginBackgroundTask(named: "second")
        #expect(app.backgroundTimeRemaining == .seconds(10), "a task begun later gets only what remains")
        app.endBackgroundTask(first)
        app.endBackgroundTask(second)
        app.run(for: .zero)
        #expect(app.state == .suspended)
        #expect(app.statistics.suspensions.first?.cause == .backgroundTasksEnded)
    }

    @Test func timeRemainingIsUnboundedInTheForegroundAndOnAPlainDaemon() {
        let app = makeApp()
        #expect(app.backgroundTimeRemaining == nil)
        let daemon = makeApp(.unlimited)
        daemon.enterBackground()
        daemon.run(for: .seconds(86_400))
        #expect(daemon.backgroundTimeRemaining == nil)
        #expect(daemon.state == .background)
    }

    @Test func invalidAndRepeatedEndsAreHarmless() {
        let app = makeApp()
        app.enterBackground()
        let task = app.beginBackgroundTask()
        app.endBackgroundTask(task)
        app.endBackgroundTask(task)
        app.endBackgroundTask(.invalid)
        app.endBackgroundTask(BackgroundTaskIdentifier(rawValue: 999))
        app.run(for: .zero)
        #expect(app.state == .suspended)
        #expect(app.beginBackgroundTask() == .invalid, "no task while suspended")
        app.terminate()
        #expect(app.beginBackgroundTask() == .invalid, "nor when not running")
    }

    @Test func expirationLeadTimeIsConfigurable() {
        var profile = ExecutionProfile.ios13
        profile.expirationLeadTime = .seconds(5)
        let app = makeApp(profile)
        var warnedAt: Duration?
        app.enterBackground()
        var task = BackgroundTaskIdentifier.invalid
        task = app.beginBackgroundTask {
            warnedAt = app.now
            app.endBackgroundTask(task)
        }
        app.run(for: .seconds(40))
        #expect(warnedAt == .seconds(25))
        #expect(app.statistics.suspensions.first?.at == .seconds(30))
    }

    @Test func capabilitiesAreEnforcedWithClearErrors() {
        let app = makeApp(modes: [])
        app.enterBackground()
        _ = app.beginBackgroundTask()
        let audio = #expect(throws: BackgroundError.self) { try app.beginAudioPlayback() }
        #expect(audio?.code == .audioModeMissing)
        #expect(audio?.message.hasPrefix("play failed: turn on the audio background mode") == true)
        let location = #expect(throws: BackgroundError.self) { try app.beginLocationActivity() }
        #expect(location?.code == .locationModeMissing)
    }

    @Test func audioKeepsItAliveAndTheGraceOutlastsAPulse() throws {
        let app = makeApp()
        app.enterBackground()
        try app.beginAudioPlayback()
        app.run(for: .seconds(3600))
        #expect(app.state == .background)
        app.endAudioPlayback()
        app.run(for: .seconds(10) - .milliseconds(1))
        #expect(app.state == .background, "the default audio grace is 10 s")
        app.run(for: .milliseconds(1))
        #expect(app.state == .suspended)
        #expect(app.statistics.suspensions.first?.cause == .audioStopped)
    }

    @Test func locationKeepsItAliveOnlyWithAlways() throws {
        let app = makeApp()
        app.enterBackground()
        try app.beginLocationActivity()
        app.run(for: .seconds(3600))
        #expect(app.state == .background)
        app.authorization = .whenInUse  // downgraded while running
        app.run(for: .seconds(10))
        #expect(app.state == .suspended)
        #expect(app.statistics.suspensions.first?.cause == .locationStopped)
    }

    @Test func delegateCallbacksAreNamedLikeUIApplications() {
        final class Recorder: ApplicationDelegate {
            var calls: [String] = []
            func applicationDidEnterBackground(_ application: Application) { calls.append("didEnterBackground") }
            func applicationWillEnterForeground(_ application: Application) { calls.append("willEnterForeground") }
            func applicationDidBecomeActive(_ application: Application) { calls.append("didBecomeActive") }
            func application(_ application: Application, didSuspendBecause cause: SuspensionCause) {
                calls.append("suspended: \(cause.rawValue)")
            }
            func applicationDidResume(_ application: Application) { calls.append("resumed") }
        }
        let app = makeApp()
        let recorder = Recorder()
        app.delegate = recorder
        app.enterBackground()
        app.run(for: .seconds(1))
        app.enterForeground()
        #expect(
            recorder.calls == [
                "didEnterBackground", "suspended: nothingKeepsItAlive", "resumed", "willEnterForeground",
                "didBecomeActive",
            ]
        )
    }

    @Test func eventsAreAnAsyncSequenceToo() async {
        let app = makeApp()
        let stream = app.events
        app.enterBackground()
        app.run(for: .zero)
        app.enterForeground()
        app.terminate()
        var seen: [AppEvent] = []
        for await event in stream {
            seen.append(event)
            if event == .willTerminate { break }
        }
        #expect(
            seen == [
                .willResignActive, .didEnterBackground, .suspended(.nothingKeepsItAlive), .resumed,
                .willEnterForeground, .didBecomeActive, .willTerminate,
            ]
        )
    }

    @Test func flappingAThousandTimesLeaksNothingAndResetsTheBudget() {
        let app = makeApp()
        let audio = SimulatedAudioOutput(app: app)
        let location = SimulatedLocationProvider(app: app)
        for kind in KeepAliveStrategyKind.allCases {
            _ = kind.make(KeepAliveContext(app: app, audio: audio, location: location))
        }
        let timersBefore = app.scheduledTimerCount
        for _ in 0..<1000 {
            app.enterBackground()
            #expect(app.backgroundTimeRemaining == .seconds(30))
            app.run(for: .seconds(7))
            app.enterForeground()
            app.run(for: .seconds(1))
        }
        #expect(app.activeBackgroundTaskCount == 0)
        #expect(app.scheduledTimerCount == timersBefore)
        #expect(!app.isPlayingAudio)
        #expect(app.statistics.backgroundEntries == 1000)
        #expect(app.statistics.suspensions.isEmpty && app.statistics.termination == nil)
        #expect(app.nextEventTime == nil || app.nextEventTime! <= app.now + .seconds(30), "nothing piles up")
    }
}
