import Foundation
import KeepAliveCore
import KeepAliveService
import LocationKeepAliveMocks
import TestWaiting
import Testing

/// How the service starts: a service told to start in the background (`keepalive run
/// --background`) is never active, so nothing of the foreground opens for a moment.
@Suite struct ServiceLaunchTests {
    /// Launched active, then sent to the background, it opened the foreground watch between the
    /// two; a fix the watch read then was journaled and published unasked (a fresh clone's
    /// ThreadSanitizer run: four locations published for three `reportLocation` commands).
    @Test func aServiceStartedInTheBackgroundNeverOpensTheForegroundWatch() async throws {
        let source = ScriptedLocationSource()
        var configuration = KeepAliveService.Configuration()
        configuration.strategy = .none
        configuration.startsInBackground = true
        let service = KeepAliveService(
            configuration: configuration, locationManager: LocationManager(source: source), authorization: nil
        )
        let events = Locked<[KeepAliveService.Event]>([])
        let (commands, stop) = AsyncStream.makeStream(of: ApplicationCommand.self)
        let running = Task { await service.run(commands: commands) { event in events.withLock { $0.append(event) } } }
        try await waitUntil("the service in the background") {
            events.withLock { $0.contains { if case .lifecycle(.didEnterBackground) = $0 { true } else { false } } }
        }
        stop.finish()
        await running.value
        let lifecycle = events.withLock { $0.compactMap { if case .lifecycle(let change) = $0 { change } else { nil } } }
        #expect(lifecycle.prefix(2) == [.didFinishLaunching, .didEnterBackground])
        #expect(!lifecycle.contains(.didBecomeActive))
        #expect(source.sessionsStarted == 0, "no watch opened")
    }
}
