import Logging
import Testing

@testable import KeepAliveCore
@testable import KeepAliveSimulation
import LocationKeepAliveMocks

/// Seven simulated days of random lifecycle flapping, authorization changes, gpsd outages and
/// audio failures under the hybrid driver, with the invariants checked after every event the
/// run loop handles (about 55,000 a week). Seeded: a failure names the seed and the time.
struct SoakTests {
    struct AudioFailure: Error {}

    @Test(arguments: [ExecutionProfile.ios13, .ios12], [UInt64(1), 2])
    func aWeekOfFaultsKeepsEveryInvariant(profile: ExecutionProfile, seed: UInt64) {
        var random = SeededGenerator(state: seed)
        var quiet = Logger(label: "soak")
        quiet.logLevel = .critical
        let app = Application(
            profile: profile,
            backgroundModes: [.audio, .location],
            authorization: .always,
            logger: quiet
        )
        let audio = SimulatedAudioOutput(app: app)
        let location = SimulatedLocationProvider(app: app)
        let driver = HybridKeepAlive(KeepAliveContext(app: app, audio: audio, location: location))
        app.addObserver { driver.handle($0) }
        app.launch()

        let week = Duration.seconds(7 * 86_400)
        var nextFault = Duration.zero
        var steps = 0
        var violations: [String] = []
        func check(_ condition: Bool, _ what: String) {
            if !condition, violations.count < 10 { violations.append("seed \(seed), t=\(app.now.seconds) s: \(what)") }
        }
        while app.now < week {
            if app.now >= nextFault {
                switch Int.random(in: 0..<10, using: &random) {
                case 0...2: app.enterBackground()
                case 3...4: app.enterForeground()
                case 5:
                    app.authorization = [.always, .whenInUse, .denied, .notDetermined].randomElement(using: &random)!
                case 6: location.isAvailable.toggle()  // gpsd down or back
                case 7: audio.failure = audio.failure == nil ? AudioFailure() : nil  // the sound device
                case 8: if app.state == .notRunning { app.launch() } else { app.enterBackground() }
                default: if Int.random(in: 0..<20, using: &random) == 0 { app.terminate() }
                }
                nextFault = app.now + .seconds(Int.random(in: 60...7_200, using: &random))
            }
            // One handled event at a time, up to the next fault.
            let target = min(app.nextEventTime ?? nextFault, nextFault, week)
            app.advance(to: target)
            steps += 1

            check(app.activeBackgroundTaskCount <= 1, "\(app.activeBackgroundTaskCount) background tasks")
            check(app.scheduledTimerCount <= 2, "\(app.scheduledTimerCount) timers (at most one tick and one callback)")
            check(app.audioPlaybackCount <= 1, "\(app.audioPlaybackCount) pulses at once")
            check(!app.isPlayingAudio || app.state.isRunning, "audio open while \(app.state)")
            if !app.state.isRunning {
                check(!driver.holdsAnything || app.state == .suspended, "the driver holds work while \(app.state)")
            }
            // The policy's verdict, once the events due now are handled.
            if (app.nextEventTime ?? .seconds(Int.max)) > app.now {
                if app.state == .background {
                    check(app.suspensionCause() == nil, "running in the background with nothing keeping it alive")
                }
                if app.state == .suspended {
                    check(app.suspensionCause() != nil, "suspended while something keeps it alive")
                }
            }
        }
        #expect(violations.isEmpty, "\(violations.joined(separator: "\n"))")
        #expect(steps > 10_000, "the week had \(steps) steps")
        print(
            "soak \(profile.name) seed \(seed): \(steps) steps, \(app.statistics.suspensions.count) suspensions, "
                + "\(driver.counts.polls) polls, \(driver.counts.pulses) pulses, \(driver.counts.failedPulses) failed pulses"
        )
    }
}
