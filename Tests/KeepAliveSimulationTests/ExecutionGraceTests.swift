import KeepAliveCore
import KeepAliveSimulation
import Testing

/// The profile's grace periods against the documented recipe: after the background task, a
/// 0.2 s pulse or a location poll every 10 s keeps the app alive; a longer interval does not.
@Suite struct ExecutionGraceTests {
    /// The recipe's loop, reduced to one kind of keep-alive, as app code.
    final class PeriodicKeepAlive: KeepAliveStrategy {
        let context: KeepAliveContext
        let interval: Duration
        let usesLocation: Bool
        var task = BackgroundTaskIdentifier.invalid

        init(_ context: KeepAliveContext, interval: Duration, usesLocation: Bool) {
            self.context = context
            self.interval = interval
            self.usesLocation = usesLocation
            context.app.addObserver { [unowned self] event in self.handle(event) }
        }

        func handle(_ event: AppEvent) {
            guard event == .didEnterBackground else { return }
            task = context.app.beginBackgroundTask { [unowned self] in
                context.app.endBackgroundTask(task)
                context.app.scheduleTimer(after: .zero, repeating: interval) { [unowned self] in tick() }
            }
        }

        func tick() {
            if usesLocation {
                try? context.location.requestLocation(timeout: .seconds(5)) { _ in }
            } else {
                try? context.audio.playPulse(length: .milliseconds(200))
            }
        }
    }

    private func run(interval: Duration, usesLocation: Bool) -> ExecutionStatistics {
        let app = Application(profile: .ios13, backgroundModes: [.audio, .location], authorization: .always)
        let context = KeepAliveContext(
            app: app,
            audio: SimulatedAudioOutput(app: app),
            location: SimulatedLocationProvider(app: app)
        )
        let strategy = PeriodicKeepAlive(context, interval: interval, usesLocation: usesLocation)
        app.launch()
        app.enterBackground()
        app.run(for: .seconds(86_400))
        withExtendedLifetime(strategy) {}
        return app.statistics
    }

    @Test(arguments: [false, true])
    func theRecipeEveryTenSecondsSurvivesADay(usesLocation: Bool) {
        let statistics = run(interval: .seconds(10), usesLocation: usesLocation)
        #expect(statistics.suspensions.isEmpty)
        // One tick at the expiration (29 s), then every 10 s until the day ends.
        #expect(statistics.wakeups >= 8_637)
    }

    @Test func aPulseIntervalLongerThanTheGraceIsSuspended() {
        let statistics = run(interval: .seconds(11), usesLocation: false)
        // First pulse at 29 s, silent from 29.2 s, grace 10 s: suspended at 39.2 s, before the 40 s pulse.
        #expect(statistics.suspensions == [.init(at: .milliseconds(39_200), cause: .audioStopped)])
    }

    @Test func aPollIntervalLongerThanTheGraceIsSuspended() {
        let statistics = run(interval: .seconds(15), usesLocation: true)
        // First poll at 29 s takes 1 s, grace 10 s: suspended at 40 s, before the 44 s poll.
        #expect(statistics.suspensions == [.init(at: .seconds(40), cause: .locationStopped)])
    }

    @Test func deniedLocationIsAClearErrorNotAKeepAlive() {
        let report = Simulator(authorization: .denied, strategy: .continuousLocation).run()
        #expect(report.suspendedAt == 30)
        #expect(report.notes.first == "location failed: authorization is denied; it needs when-in-use or always")
    }

    @Test func continuousUpdatesWakeTheAppForEveryFix() {
        let report = Simulator(profile: .unlimited, strategy: .continuousLocation, duration: .seconds(3600)).run()
        #expect(report.locationFixes == 3600)
        #expect(report.wakeups == 3600)
    }
}

/// Android and Ubuntu Touch freeze an app a fixed time after it leaves the screen.
@Suite struct BackgroundEntryGraceTests {
    @Test(arguments: [
        (ExecutionProfile.android, Duration.seconds(10)), (ExecutionProfile.ubuntuTouch, Duration.milliseconds(1500)),
    ])
    func suspendedAFixedTimeAfterEnteringTheBackground(profile: ExecutionProfile, grace: Duration) {
        let app = Application(profile: profile, backgroundModes: [.audio])
        app.launch()
        app.run(for: .seconds(3))
        app.enterBackground()
        app.run(for: grace - .milliseconds(1))
        #expect(app.state == .background)
        app.run(for: .milliseconds(1))
        #expect(app.state == .suspended)
        #expect(app.statistics.suspensions.first?.at == .seconds(3) + grace)
    }

    @Test func audioKeepsAnAndroidAppRunningPastTheGrace() throws {
        let app = Application(profile: .android, backgroundModes: [.audio])
        app.launch()
        app.enterBackground()
        try app.beginAudioPlayback()
        app.run(for: .seconds(60))
        #expect(app.state == .background)
        app.endAudioPlayback()
        app.run(for: .seconds(10))
        #expect(app.state == .suspended)
    }
}
