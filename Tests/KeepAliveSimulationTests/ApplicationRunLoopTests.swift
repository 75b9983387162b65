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
}

/// Events collected by a reader task.
final class Recorded: Sendable {
    private let storage = Locked<[AppEvent]>([])
    var events: [AppEvent] { storage.withLock { $0 } }
    func append(_ event: AppEvent) { storage.withLock { $0.append(event) } }
}
