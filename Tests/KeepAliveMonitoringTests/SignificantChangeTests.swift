import FoundationEssentials
import KeepAliveCore
import KeepAliveMonitoring
import LocationKeepAliveMocks
import Testing

/// The significant-change service: 500 m surely moved, at most one event per 5 minutes.
struct SignificantChangeTests {
    func events(of script: TrackScript) throws -> [MonitorEvent] {
        let monitor = try LocationMonitor(named: "moves")
        try monitor.add(.significantChange, identifier: "moves")
        return script.fixes.flatMap { monitor.evaluate($0) }
    }

    func secondsFromStart(_ events: [MonitorEvent]) -> [Double] {
        events.map { $0.date.timeIntervalSince(TrackScript.start) }
    }

    @Test func drivingGivesAnEventEveryFiveMinutes() throws {
        var script = TrackScript(seed: 1)
        script.move(for: 1801, speed: 15) { t in (north: 15 * t, east: 0) }
        let events = try events(of: script)
        #expect(secondsFromStart(events) == [0, 300, 600, 900, 1200, 1500, 1800])
        #expect(events.allSatisfy { $0.state == .satisfied })
    }

    @Test func walkingGivesAnEventEach500MetresSurelyMoved() throws {
        var script = TrackScript(seed: 2)
        script.move(for: 3600, speed: 1) { t in (north: 0, east: t) }
        let times = secondsFromStart(try events(of: script))
        let spacing = zip(times.dropFirst(), times).map { $0 - $1 }
        // 500 m plus both fixes' accuracy (2 × 11.4 m) at 1 m/s, give or take the noise.
        print("walking 1 m/s: significant changes every \(spacing) s")
        #expect(times.first == 0)
        #expect(spacing.count == 6 && spacing.allSatisfy { (505...545).contains($0) }, "\(spacing)")
    }

    @Test func aReceiverAtRestGivesOnlyTheFirst() throws {
        var script = TrackScript(seed: 3)
        script.settle()
        script.move(for: 4 * 3600, speed: 0) { _ in (north: 0, east: 0) }
        #expect(secondsFromStart(try events(of: script)) == [0])
    }
}
