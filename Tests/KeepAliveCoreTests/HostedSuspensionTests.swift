import Foundation
import KeepAliveCore
import LocationKeepAliveMocks
import Testing

/// Freezing safely, on the app's side: its session closed before a freeze and replaced after,
/// its timers stopped while frozen and fired once after.
@Suite(.timeLimit(.minutes(3))) struct HostedSuspensionTests {
    @Test func theSessionIsClosedBeforeAFreezeAndANewOneServesTheWaitingConsumers() async throws {
        let source = ScriptedLocationSource()
        let manager = LocationManager(source: source)
        let received = Locked<[Double]>([])
        let consumer = Task {
            for try await case .location(let fix) in manager.updates(.everything) {
                received.withLock { $0.append(fix.latitude) }
            }
        }
        await source.waitForSessions(1)
        source.sendFix(latitude: 1, longitude: 1, at: Date())
        try await waitUntil { received.withLock { $0 } == [1] }

        manager.closeSessionForSuspension()
        try await waitUntil { source.activeSessions == 0 }
        #expect(manager.location == nil, "the cached fix is forgotten")
        source.sendFix(latitude: 2, longitude: 2, at: Date())  // what gpsd wrote to the frozen socket: nobody reads it

        manager.resumeAfterSuspension()
        await source.waitForSessions(2)
        source.sendFix(latitude: 3, longitude: 3, at: Date())
        try await waitUntil { received.withLock { $0 } == [1, 3] }
        #expect(manager.sessionsRestartedAfterSuspension == 1)
        consumer.cancel()
    }

    @Test func timersStopWhileTheHostHasTheAppFrozenAndFireOnceAfter() {
        let app = Application(profile: .unlimited, backgroundModes: [.audio])
        var fired: [Duration] = []
        app.launch()
        app.scheduleTimer(after: .seconds(1), repeating: .seconds(1)) { fired.append(app.now) }
        app.enterBackground()
        app.run(for: .milliseconds(2500))
        #expect(fired == [.seconds(1), .seconds(2)])
        app.suspendByHost()
        #expect(app.state == .suspended && app.statistics.suspensions.last?.cause == .frozenByHost)
        app.run(for: .seconds(10))  // frozen: nothing runs
        #expect(fired.count == 2)
        app.resumeByHost()
        #expect(fired == [.seconds(1), .seconds(2), .milliseconds(12_500)], "the overdue timer fires once")
        app.run(for: .seconds(1))
        #expect(fired.count == 4)
    }
}
