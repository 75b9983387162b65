import KeepAliveCore
import KeepAliveSimulation
import Testing

/// The hybrid driver: its state machine alone, then run as app code on the execution model.
@Suite struct HybridKeepAliveMachineTests {
    typealias Machine = HybridKeepAliveMachine

    private func withoutLogs(_ actions: [Machine.Action]) -> [Machine.Action] {
        actions.filter { if case .log = $0 { false } else { true } }
    }

    @Test func theRecipeStepByStep() {
        var machine = Machine(authorization: .always)
        #expect(
            withoutLogs(machine.handle(.enteredBackground)) == [
                .beginBackgroundTask, .scheduleCallback(after: .seconds(30)),
            ]
        )
        #expect(withoutLogs(machine.handle(.tick)) == [], "no loop while the task runs")
        #expect(
            withoutLogs(machine.handle(.taskExpiring)) == [
                .endBackgroundTask, .requestLocation(timeout: .seconds(5)), .scheduleTick(after: .seconds(10)),
            ]
        )
        #expect(withoutLogs(machine.handle(.pollFailed("gpsd down"))) == [.playPulse(.milliseconds(200))])
        #expect(withoutLogs(machine.handle(.authorizationChanged(.whenInUse))) == [])
        #expect(
            withoutLogs(machine.handle(.tick)) == [.playPulse(.milliseconds(200)), .scheduleTick(after: .seconds(10))]
        )
        #expect(withoutLogs(machine.handle(.callbackDue)) == [.callClient, .scheduleCallback(after: .seconds(30))])
        #expect(withoutLogs(machine.handle(.lowPowerChanged(true))) == [])
        #expect(
            withoutLogs(machine.handle(.tick)) == [.playPulse(.milliseconds(200)), .scheduleTick(after: .seconds(10))],
            "the keep-alive tick is never stretched: it must stay under the grace"
        )
        #expect(withoutLogs(machine.handle(.callbackDue)) == [.callClient, .scheduleCallback(after: .seconds(60))])
        #expect(withoutLogs(machine.handle(.willEnterForeground)) == [.cancelTick, .cancelCallback])
        #expect(!machine.isLooping)
    }

    @Test func audioFailureFallsBackToAPollWithAlwaysOnly() {
        var always = Machine(authorization: .always)
        _ = always.handle(.enteredBackground)
        _ = always.handle(.taskExpiring)
        #expect(withoutLogs(always.handle(.audioFailed("busy"))) == [.requestLocation(timeout: .seconds(5))])
        var whenInUse = Machine(authorization: .whenInUse)
        _ = whenInUse.handle(.enteredBackground)
        _ = whenInUse.handle(.taskExpiring)
        let actions = whenInUse.handle(.audioFailed("busy"))
        #expect(withoutLogs(actions) == [])
        #expect(
            actions.contains {
                if case .log(let d) = $0 { d.message.contains("nothing keeps the app alive") } else { false }
            }
        )
    }

    @Test func everyDecisionIsLoggedWithStableMetadata() {
        var machine = Machine(authorization: .whenInUse)
        let logs = machine.handle(.enteredBackground).compactMap { if case .log(let d) = $0 { d } else { nil } }
        #expect(
            logs == [
                .init(
                    message: "background task begun",
                    metadata: ["state": "background-task", "authorization": "when-in-use"]
                )
            ]
        )
    }

    @Test func optionsAreValidated() {
        var options = Machine.Options()
        options.pollTimeout = .seconds(10)
        #expect(throws: LocationError.self) { try options.validate() }
        options = .init()
        options.lowPowerStretch = 0.5
        #expect(throws: LocationError.self) { try options.validate() }
    }
}

@Suite struct HybridKeepAliveTests {
    private func hour(
        _ authorization: LocationAuthorization,
        script: SimulationScript = .backgroundForever
    ) -> SimulationReport {
        Simulator(authorization: authorization, strategy: .hybrid, duration: .seconds(3600), script: script).run()
    }

    // Ticks at 29 s (the task's expiration), then every 10 s up to 3599 s: 358.
    @Test func anHourInTheBackgroundWithAlwaysPollsOncePerInterval() {
        let report = hour(.always)
        #expect(report.survived)
        #expect(report.locationPolls == 358 && report.audioPulses == 0)
    }

    @Test(arguments: [LocationAuthorization.whenInUse, .denied, .notDetermined])
    func anHourInTheBackgroundOtherwisePulsesOncePerInterval(authorization: LocationAuthorization) {
        let report = hour(authorization)
        #expect(report.survived)
        #expect(report.audioPulses == 358 && report.locationPolls == 0)
        #expect(abs(report.audioSeconds - 358 * 0.2) < 1e-9)
    }

    @Test func anAuthorizationChangeTakesEffectAtTheNextTick() throws {
        let script = try SimulationScript(parsing: "0 background\n1000s auth when-in-use\n2005s auth always")
        let report = hour(.always, script: script)
        // Polls at 29..999 (98), pulses at 1009..1999 (100), polls at 2009..3599 (160).
        #expect(report.locationPolls == 98 + 160)
        #expect(report.audioPulses == 100)
        #expect(report.survived)
    }

    @Test func failedPollsFallBackToPulsesAndTheAppStaysAlive() throws {
        let script = try SimulationScript(parsing: "0 background\n600s gps down\n1200s gps up")
        let report = hour(.always, script: script)
        #expect(report.survived)
        // Ticks at 609..1199 (60) poll, time out (5 s), then pulse.
        #expect(report.audioPulses == 60)
        #expect(report.locationFixes == 358 - 60)
        #expect(report.notes.contains { $0.hasPrefix("poll failed: pulse instead") })
    }

    @Test func anIntervalLongerThanTheGraceIsSuspended() {
        var options = HybridKeepAliveMachine.Options()
        options.interval = .seconds(15)
        let pulses = Simulator(authorization: .whenInUse, strategy: .hybrid, hybridOptions: options).run()
        #expect(pulses.suspendedAt == 39.2)
        let polls = Simulator(authorization: .always, strategy: .hybrid, hybridOptions: options).run()
        #expect(polls.suspendedAt == 40)
    }

    @Test func flappingLeaksNothing() {
        let app = Application(profile: .ios13, backgroundModes: [.audio, .location], authorization: .always)
        let audio = SimulatedAudioOutput(app: app)
        let context = KeepAliveContext(app: app, audio: audio, location: SimulatedLocationProvider(app: app))
        let driver = HybridKeepAlive(context)
        app.addObserver { driver.handle($0) }
        app.launch()
        for round in 0..<1000 {
            app.enterBackground()
            app.run(for: .seconds(round % 2 == 0 ? 45 : 5))  // half of them reach the loop
            app.enterForeground()
            app.run(for: .seconds(1))
            #expect(!driver.holdsAnything)
        }
        #expect(app.activeBackgroundTaskCount == 0)
        #expect(app.scheduledTimerCount == 0)
        #expect(!app.isPlayingAudio)
        #expect(app.statistics.suspensions.isEmpty && app.statistics.termination == nil)
        #expect(driver.counts.polls == 500 * 2)  // ticks at 29 s and 39 s in each long round
    }

    @Test func theClientIsCalledBackWhileKeptAlive() {
        let report = hour(.always)
        // Callbacks at 30, 60, ... 3570 s: 119; wake-ups = 358 ticks + 358 poll answers + 119 + 1 expiry.
        #expect(report.wakeups == 358 + 358 + 119 + 1)
    }

    @Test func aTickFallsBackOnceWhenBothDevicesFail() {
        // Found by the soak test: "always" in the machine, not determined in the app, and a broken
        // sound device made poll and pulse call each other until the stack overflowed.
        var machine = HybridKeepAliveMachine(options: .init(), authorization: .always)
        _ = machine.handle(.enteredBackground)
        _ = machine.handle(.taskExpiring)
        #expect(machine.handle(.pollFailed("not authorized")).contains(.playPulse(.milliseconds(200))))
        #expect(
            !machine.handle(.audioFailed("no device")).contains {
                if case .requestLocation = $0 { true } else { false }
            }
        )
        #expect(machine.handle(.tick).contains(.requestLocation(timeout: .seconds(5))), "the next tick tries again")
        #expect(machine.handle(.pollFailed("not authorized")).contains(.playPulse(.milliseconds(200))))
    }
}
