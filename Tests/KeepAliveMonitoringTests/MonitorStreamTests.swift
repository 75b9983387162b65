import FoundationEssentials
import KeepAliveCore
import KeepAliveMonitoring
import LocationKeepAliveMocks
import TestWaiting
import Testing

/// The events stream, fed by a location manager, as an app uses it.
struct MonitorStreamTests {
    @Test func aManagersFixesGiveEventsOnTheStreamInOrder() async throws {
        let source = ScriptedLocationSource()
        let manager = LocationManager(source: source)
        let monitor = try LocationMonitor(named: "stream")
        let home = TrackScript.point(north: 0, east: 0)
        try monitor.add(.circle(center: home, radius: 200), identifier: "home", assuming: .unsatisfied)
        try monitor.add(.significantChange, identifier: "moves")
        let events = monitor.events
        let watching = Task { try await monitor.monitor(manager) }
        await source.waitForSessions(1)
        // Walk in from 400 m east of home at 10 m/s: a significant change at once, then home.
        for second in 0..<40 {
            let point = TrackScript.point(north: 0, east: 400 - 10 * Double(second))
            source.sendFix(
                latitude: point.latitude, longitude: point.longitude, accuracy: 5,
                at: TrackScript.start.addingTimeInterval(Double(second))
            )
        }
        var received: [MonitorEvent] = []
        for await event in events {
            received.append(event)
            if received.count == 2 { break }
        }
        watching.cancel()
        try await watching.value
        #expect(received.map(\.identifier) == ["moves", "home"])
        #expect(received.map(\.state) == [.satisfied, .satisfied])
        // In at 200 m (20 s); two fixes 10 m beyond the edge at 10 m/s: 21 s and 22 s.
        #expect(received[1].date == TrackScript.start.addingTimeInterval(22))
        #expect(received[1].location.horizontalAccuracy == 5)
        #expect(monitor.record(for: "home")?.lastEvent == received[1])
    }

    /// `for await event in monitor.events` over a source that ends ends with it, after every event
    /// (the monitoring article's loop: before, it waited for ever once the replay had ended).
    /// The time limit catches a hang, not slowness: alone this takes milliseconds, but in the
    /// ThreadSanitizer batch every test of the suite ended after about 100 s (a 1-minute limit failed there).
    @Test(.timeLimit(.minutes(5))) func theStreamEndsWhenTheSourceEndsAfterEveryEvent() async throws {
        let source = ScriptedLocationSource()
        let monitor = try LocationMonitor(named: "ends")
        try monitor.add(.circle(center: TrackScript.point(north: 0, east: 0), radius: 200), identifier: "home", assuming: .unsatisfied)
        try monitor.add(.significantChange, identifier: "moves")
        let events = monitor.events
        let watching = Task { try await monitor.monitor(LocationManager(source: source)) }
        await source.waitForSessions(1)
        walkHome(source)
        source.finish()
        try await watching.value
        // The consumer starts only now, after the watch ended: it still reads every event, then the end.
        var received: [String] = []
        for await event in events { received.append(event.identifier) }
        #expect(received == ["moves", "home"])
    }

    /// A stream made while nothing is monitoring follows the next watch, not the one that ended;
    /// one made while two watches run ends with the last.
    @Test(.timeLimit(.minutes(5))) func aStreamFollowsTheNextWatchAndEndsWithTheLastOfThem() async throws {
        let monitor = try LocationMonitor(named: "twice")
        try monitor.add(.significantChange, identifier: "moves")
        let first = ScriptedLocationSource()
        let firstWatch = Task { try await monitor.monitor(LocationManager(source: first)) }
        await first.waitForSessions(1)
        first.finish()
        try await firstWatch.value

        let events = monitor.events  // made after the first watch ended
        let second = ScriptedLocationSource()
        let third = ScriptedLocationSource()
        let secondWatch = Task { try await monitor.monitor(LocationManager(source: second)) }
        let thirdWatch = Task { try await monitor.monitor(LocationManager(source: third)) }
        await second.waitForSessions(1)
        await third.waitForSessions(1)
        walkHome(second)
        second.finish()
        try await secondWatch.value
        var iterator = events.makeAsyncIterator()
        #expect(await iterator.next()?.identifier == "moves", "the second watch's event")
        third.finish()  // the last watch ends: so does the stream
        try await thirdWatch.value
        #expect(await iterator.next() == nil)
    }

    /// From 400 m east of home to home at 10 m/s, 5 m fixes: a significant change at once, then home.
    private func walkHome(_ source: ScriptedLocationSource) {
        for second in 0..<40 {
            let point = TrackScript.point(north: 0, east: 400 - 10 * Double(second))
            source.sendFix(latitude: point.latitude, longitude: point.longitude, accuracy: 5, at: TrackScript.start.addingTimeInterval(Double(second)))
        }
    }
}

/// A watching monitor hands each event to its handler before it saves the event to its file:
/// what the handler keeps durably (a journal) has the event even if the process dies before
/// the save, and a restart from the file tells it again: at least once, never lost.
struct MonitorHandlerOrderTests {
    @Test func theHandlerHasEachEventBeforeTheFileSaysIt() async throws {
        let file = MonitorFileTests.temporaryFile()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let source = ScriptedLocationSource()
        let manager = LocationManager(source: source)
        let monitor = try LocationMonitor(named: "order", file: file)
        let home = TrackScript.point(north: 0, east: 0)
        try monitor.add(.circle(center: home, radius: 200), identifier: "home", assuming: .unsatisfied)
        // What the file said when the handler had each event: read by a second monitor, as a restart would.
        let savedWhenHandled = Locked<[MonitorState?]>([])
        let handled = Locked(0)
        let watching = Task {
            try await monitor.monitor(manager, pausing: nil) { _ in
                let restarted = try? LocationMonitor(named: "order", file: file)
                savedWhenHandled.withLock { $0.append(restarted?.record(for: "home")?.state) }
                handled.withLock { $0 += 1 }
            }
        }
        await source.waitForSessions(1)
        for second in 0..<40 {
            let point = TrackScript.point(north: 0, east: 400 - 10 * Double(second))
            source.sendFix(
                latitude: point.latitude, longitude: point.longitude, accuracy: 5,
                at: TrackScript.start.addingTimeInterval(Double(second))
            )
        }
        try await waitFor { handled.withLock { $0 } == 1 }
        watching.cancel()
        try await watching.value
        #expect(savedWhenHandled.withLock { $0 } == [.unsatisfied], "the file still had the state before the event")
        #expect(try LocationMonitor(named: "order", file: file).record(for: "home")?.state == .satisfied, "saved after")
    }

    /// Waits up to 10 s for `condition` (the scripted fixes are handled on another task).
    func waitFor(_ condition: () -> Bool) async throws {
        try await waitUntil(within: .seconds(10), asking: condition)
    }
}
