import KeepAliveCore
import KeepAliveSimulation
import Testing

/// The facts of the documents the product is based on, reproduced by the simulator, exactly.
@Suite struct SimulatorTests {
    private func simulate(
        _ strategy: KeepAliveStrategyKind,
        _ profile: ExecutionProfile = .ios13,
        auth: LocationAuthorization = .always,
        modes: BackgroundModes = [.audio, .location],
        duration: Duration = .seconds(86_400)
    ) -> SimulationReport {
        Simulator(profile: profile, authorization: auth, strategy: strategy, duration: duration, backgroundModes: modes)
            .run()
    }

    @Test func nothingIsSuspendedAtOnce() {
        let report = simulate(.none)
        #expect(report.suspendedAt == 0)
        #expect(report.backgroundAliveSeconds == 0)
    }

    @Test(arguments: [(ExecutionProfile.ios13, 30.0), (ExecutionProfile.ios12, 180.0)])
    func aBackgroundTaskLastsItsBudget(profile: ExecutionProfile, budget: Double) {
        let report = simulate(.backgroundTask, profile)
        #expect(!report.survived)
        #expect(report.suspendedAt == budget)
        #expect(report.suspensions.map(\.cause) == ["backgroundTimeExpired"])
        #expect(report.notes == ["background task expiring"])
    }

    @Test func renewalGainsNothingUnderIOS13() {
        let plain = simulate(.backgroundTask)
        let renewal = simulate(.renewal)
        #expect(renewal.suspendedAt == plain.suspendedAt)
        #expect(renewal.notes.filter { $0.hasPrefix("renewing") }.count == 5)
    }

    @Test func renewalGainsExactlyWhatAResettingProfileGives() {
        var profile = ExecutionProfile.ios13
        profile.name = "custom"
        profile.renewal = .resetsBudget
        let report = simulate(.renewal, profile)
        // Renewed at 21 s left... each time 9 s remain (a 1 s check): 5 x 21 s gained on 30 s.
        let expected: Double = 30 + 5 * 21
        #expect(report.suspendedAt == expected)
    }

    @Test func anAudioLoopLivesADay() {
        let report = simulate(.audioLoop)
        #expect(report.survived)
        #expect(report.backgroundAliveSeconds == 86_400)
        #expect(report.audioSeconds == 86_400)
    }

    @Test func anAudioLoopWithoutTheAudioModeFailsAndLastsTheBudget() {
        let report = simulate(.audioLoop, modes: [.location])
        #expect(report.suspendedAt == 30)
        #expect(report.notes.first?.hasPrefix("play failed: turn on the audio background mode") == true)
    }

    @Test func continuousLocationLivesADayWithAlwaysOnly() {
        #expect(simulate(.continuousLocation, auth: .always).survived)
        let whenInUse = simulate(.continuousLocation, auth: .whenInUse)
        #expect(whenInUse.suspendedAt == 30)
        #expect(simulate(.continuousLocation, .ios12, auth: .whenInUse).suspendedAt == 180)
    }

    @Test func continuousLocationWithoutTheLocationModeFails() {
        let report = simulate(.continuousLocation, modes: [.audio])
        #expect(report.suspendedAt == 30)
        #expect(report.notes.first?.hasPrefix("background location failed") == true)
    }

    @Test func nothingIsEverSuspendedOnAPlainDaemon() {
        for strategy in KeepAliveStrategyKind.allCases {
            #expect(simulate(strategy, .unlimited).survived, "\(strategy)")
        }
    }

    @Test func aScriptDrivesLifecycleAndAuthorization() throws {
        let script = try SimulationScript(
            parsing: """
                # out, back, out again, then lose "always"
                0 background
                10m foreground
                20m background
                1h auth when-in-use
                """
        )
        let report = Simulator(strategy: .continuousLocation, script: script).run()
        let expected: Double = 1200 + 2400 + 10  // after the downgrade, the location grace, then suspended
        #expect(report.suspendedAt == expected)
        #expect(report.suspensions.map(\.cause) == ["locationStopped"])
    }

    @Test func scriptErrorsNameTheLine() {
        #expect(throws: SimulationScriptError(line: 2, message: "'soon' is not a time (use 90s, 10m, 2h)")) {
            try SimulationScript(parsing: "0 background\nsoon foreground")
        }
        #expect(throws: SimulationScriptError.self) { try SimulationScript(parsing: "5s auth sometimes") }
        #expect(throws: SimulationScriptError.self) { try SimulationScript(parsing: "5s dance") }
    }

    @Test func durationsParse() {
        #expect(Duration(parsing: "24h") == .seconds(86_400))
        #expect(Duration(parsing: "1h30m") == .seconds(5400))
        #expect(Duration(parsing: "250ms") == .milliseconds(250))
        #expect(Duration(parsing: "90") == .seconds(90))
        #expect(Duration(parsing: "1.5s") == .milliseconds(1500))
        #expect(Duration(parsing: "") == nil && Duration(parsing: "-3s") == nil && Duration(parsing: "3x") == nil)
    }
}
