import Clocks
import FoundationEssentials
import KeepAliveCore
import KeepAliveMonitoring
import LocationKeepAliveMocks
import Testing

/// The automatic pause: stationary, the monitor leaves its watch and asks for one fix every
/// 5 minutes; a fix away from the place brings the watch back.
struct StationaryPauseTests {
    @Test func aStationaryDeviceLeavesItsWatchAndChecksEveryFiveMinutes() async throws {
        let clock = TestClock()
        let source = ScriptedLocationSource()
        source.restsWhenUnwatched = true  // as gpsd
        let manager = LocationManager(source: source, clock: clock)
        let monitor = try LocationMonitor(named: "pause", clock: clock)
        try monitor.add(.significantChange, identifier: "moves")
        let monitoring = Task { try await monitor.monitor(manager) }
        func send(north: Double, at second: Double) {
            let point = TrackScript.point(north: north, east: 0)
            source.sendFix(
                latitude: point.latitude, longitude: point.longitude, accuracy: 5,
                at: TrackScript.start.addingTimeInterval(second)
            )
        }
        await source.waitForSessions(1)
        // Two minutes at rest, a fix a second: stationary, and the watch is left.
        for second in 0...120 { send(north: Double(second % 3), at: Double(second)) }
        try await waitUntil { monitor.isPaused && source.activeSessions == 0 }
        #expect(monitor.isStationary)
        #expect(source.sessionsStarted == 1)

        // Five minutes on, one check: still here, so still paused.
        let pausedAt = clock.now
        await waitUntil({ source.activeSessions == 1 }, advancing: clock, by: .seconds(10))
        #expect(source.sessionsStarted == 2)
        // At 5 minutes (one 10 s step more if the monitor had not yet begun its sleep when the test saw it paused).
        #expect((.seconds(300) ... .seconds(310)).contains(pausedAt.duration(to: clock.now)), "the check came at 5 minutes")
        send(north: 1, at: 420)
        try await waitUntil { source.activeSessions == 0 }
        #expect(monitor.isPaused)

        // Five minutes more: 300 m away. The watch comes back, and the significant change is told.
        let events = monitor.events
        await waitUntil({ source.activeSessions == 1 }, advancing: clock, by: .seconds(10))
        #expect(source.sessionsStarted == 3)
        send(north: 600, at: 720)
        try await waitUntil { !monitor.isPaused && source.activeSessions == 1 && source.sessionsStarted == 4 }
        #expect(!monitor.isStationary)
        send(north: 615, at: 721)
        var iterator = events.makeAsyncIterator()
        let moved = await iterator.next()
        #expect(moved?.identifier == "moves")
        #expect(moved?.date == TrackScript.start.addingTimeInterval(720))
        monitoring.cancel()
        try await monitoring.value
        // The watch's session ends as its stream terminates, which may come just after the task.
        try await waitUntil { source.activeSessions == 0 }
    }

    @Test func withoutAPauseTheWatchStays() async throws {
        let source = ScriptedLocationSource()
        let manager = LocationManager(source: source)
        let monitor = try LocationMonitor(named: "always")
        let monitoring = Task { try await monitor.monitor(manager, pausing: nil) }
        await source.waitForSessions(1)
        for second in 0...200 {
            source.sendFix(latitude: 52.85, longitude: 5.31, accuracy: 5, at: TrackScript.start.addingTimeInterval(Double(second)))
        }
        try await waitUntil { monitor.isStationary }
        #expect(!monitor.isPaused && source.activeSessions == 1)
        monitoring.cancel()
        try await monitoring.value
    }

    /// The articles' recipe: a monitor with its default pause over a replay or a script ends
    /// with it, on any clock, instead of pausing on the wall clock for checks it cannot answer.
    @Test func aSourceThatDoesNotRestIsNeverPausedOnAndTheMonitorEndsWithIt() async throws {
        let clock = TestClock()
        let source = ScriptedLocationSource()
        let manager = LocationManager(source: source, clock: clock)
        let monitor = try LocationMonitor(named: "script", clock: clock)
        try monitor.add(.significantChange, identifier: "moves")
        let monitoring = Task { try await monitor.monitor(manager) }
        await source.waitForSessions(1)
        for second in 0...200 {
            source.sendFix(latitude: 52.85, longitude: 5.31, accuracy: 5, at: TrackScript.start.addingTimeInterval(Double(second)))
        }
        try await waitUntil { monitor.isStationary }
        #expect(!monitor.isPaused && source.activeSessions == 1, "stationary, and still watching")
        source.finish()
        try await monitoring.value  // returns: nothing waits on a clock nobody advances
        #expect(source.sessionsStarted == 1)
    }
}
