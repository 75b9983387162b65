import Clocks
import KeepAliveCore
import KeepAliveSimulation
import LocationKeepAliveMocks
import Testing

/// The model the simulator advances in virtual time, driven instead by a clock, as the service
/// drives it with `ContinuousClock`.
@Suite(.timeLimit(.minutes(3))) struct ApplicationRunLoopTests {
    @Test func aBackgroundTaskOnAClockSuspendsAtThirtySeconds() async throws {
        let clock = TestClock<Duration>()
        let (commands, send) = AsyncStream.makeStream(of: ApplicationCommand.self)
        let (steps, step) = AsyncStream.makeStream(of: AppEvent.self)
        let run = Task {
            let app = Application(profile: .ios13, backgroundModes: [.audio, .location], authorization: .always)
            app.launch()
            let context = KeepAliveContext(
                app: app,
                audio: SimulatedAudioOutput(app: app),
                location: SimulatedLocationProvider(app: app)
            )
            let strategy = KeepAliveStrategyKind.backgroundTask.make(context)
            app.addObserver { step.yield($0) }
            await ApplicationRunLoop(clock: clock).run(app, commands: commands)
            withExtendedLifetime(strategy) {}
            app.finishAccounting()
            step.finish()
            return app.statistics
        }
        let seen = Recorded()
        let reader = Task { for await event in steps { seen.append(event) } }
        send.yield(.enterBackground)
        await waitUntil({ seen.events.contains(.didEnterBackground) }, advancing: clock, by: .zero)
        await clock.advance(by: .seconds(29))
        #expect(!seen.events.contains(.suspended(.backgroundTimeExpired)), "not before the budget ends")
        await waitUntil(
            { seen.events.contains(.suspended(.backgroundTimeExpired)) },
            advancing: clock,
            by: .milliseconds(250)
        )
        send.finish()
        let statistics = await run.value
        #expect(statistics.suspensions == [.init(at: .seconds(30), cause: .backgroundTimeExpired)])
        #expect(statistics.expirationHandlersCalled == 1)
        reader.cancel()
    }

    @Test func commandsReachTheApplicationAndForegroundResumesIt() async throws {
        let clock = TestClock<Duration>()
        let (commands, send) = AsyncStream.makeStream(of: ApplicationCommand.self)
        let (steps, step) = AsyncStream.makeStream(of: AppEvent.self)
        let run = Task {
            let app = Application(profile: .ios13)
            app.launch()
            app.addObserver { step.yield($0) }
            await ApplicationRunLoop(clock: clock).run(app, commands: commands)
            step.finish()
            return app.state
        }
        send.yield(.enterBackground)
        send.yield(.setAuthorization(.whenInUse))
        send.yield(.enterForeground)
        send.yield(.terminate)
        send.finish()
        #expect(await run.value == .notRunning)
        var seen: [AppEvent] = []
        for await event in steps { seen.append(event) }
        #expect(
            seen == [
                .willResignActive, .didEnterBackground, .suspended(.nothingKeepsItAlive), .resumed,
                .willEnterForeground,
                .didBecomeActive, .willTerminate,
            ]
        )
    }

    @Test func locationActivityFromACommandKeepsTheAppRunningUntilItEnds() async throws {
        let clock = TestClock<Duration>()
        let (commands, send) = AsyncStream.makeStream(of: ApplicationCommand.self)
        let (steps, step) = AsyncStream.makeStream(of: AppEvent.self)
        let run = Task {
            let app = Application(profile: .ios13, backgroundModes: [.location], authorization: .always)
            app.launch()
            app.addObserver { step.yield($0) }
            await ApplicationRunLoop(clock: clock).run(app, commands: commands)
            app.finishAccounting()
            step.finish()
            return app.statistics
        }
        let seen = Recorded()
        let reader = Task { for await event in steps { seen.append(event) } }
        let suspended = { seen.events.contains { if case .suspended = $0 { true } else { false } } }
        send.yield(.endLocationActivity)  // none begun: ignored
        send.yield(.beginLocationActivity)  // a server asked for a fix
        send.yield(.enterBackground)
        await waitUntil({ seen.events.contains(.didEnterBackground) }, advancing: clock, by: .zero)
        await clock.advance(by: .seconds(600))
        #expect(!suspended(), "kept running while the fix is taken, however long")
        send.yield(.endLocationActivity)
        send.yield(.endLocationActivity)  // one more than begun: ignored
        await waitUntil(suspended, advancing: clock, by: .seconds(1))
        send.finish()
        let statistics = await run.value
        let at = try #require(statistics.suspensions.first?.at)
        #expect(at >= .seconds(600) && at <= .seconds(600) + Application(profile: .ios13).profile.locationGrace + .seconds(1))
        reader.cancel()
    }

    @Test func locationActivityBegunWhileSuspendedIsTakenAtTheResume() async throws {
        let clock = TestClock<Duration>()
        let (commands, send) = AsyncStream.makeStream(of: ApplicationCommand.self)
        let (steps, step) = AsyncStream.makeStream(of: AppEvent.self)
        let run = Task {
            let app = Application(profile: .ios13, backgroundModes: [.location], authorization: .always)
            app.launch()
            app.addObserver { step.yield($0) }
            await ApplicationRunLoop(clock: clock).run(app, commands: commands)
            step.finish()
            return app.locationActivityCount
        }
        let seen = Recorded()
        let reader = Task { for await event in steps { seen.append(event) } }
        send.yield(.enterBackground)  // nothing keeps it alive: suspended at once, then frozen
        send.yield(.suspendedByHost)
        await waitUntil({ seen.events.contains { if case .suspended = $0 { true } else { false } } }, advancing: clock, by: .zero)
        // The thawed process reads a command before the host's resume reaches the model.
        send.yield(.beginLocationActivity)
        send.yield(.resumedByHost)
        await waitUntil({ seen.events.contains(.resumed) }, advancing: clock, by: .zero)
        await clock.advance(by: .seconds(300))
        #expect(seen.events.filter { if case .suspended = $0 { true } else { false } }.count == 1, "kept running after the resume")
        send.finish()
        #expect(await run.value == 1)
        reader.cancel()
    }
}

/// Events collected by a reader task.
final class Recorded: Sendable {
    private let storage = Locked<[AppEvent]>([])
    var events: [AppEvent] { storage.withLock { $0 } }
    func append(_ event: AppEvent) { storage.withLock { $0.append(event) } }
}
