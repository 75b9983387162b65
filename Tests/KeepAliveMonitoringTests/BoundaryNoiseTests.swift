import FoundationEssentials
import KeepAliveCore
import KeepAliveMonitoring
import LocationKeepAliveMocks
import Testing

/// A receiver resting on a region's edge for hours, its error wandering as a real one's does
/// and as large as the accuracy it reports: no enter/exit storm.
struct BoundaryNoiseTests {
    @Test(arguments: 1...5 as ClosedRange<UInt64>)
    func aReceiverRestingOnTheEdgeDoesNotFlap(seed: UInt64) throws {
        var script = TrackScript(seed: seed)
        script.settle()
        script.move(for: 2 * 3600) { _ in (north: 0, east: 100) }
        let center = TrackScript.point(north: 0, east: 0)
        let monitor = try LocationMonitor(named: "edge")
        try monitor.add(.circle(center: center, radius: 100), identifier: "edge", assuming: .unsatisfied)
        let events = script.fixes.flatMap { monitor.evaluate($0) }
        // What a rule on the fix's position alone would have said, for scale.
        var naive = 0
        var inside = false
        for fix in script.fixes where (greatCircleDistance(fix.coordinate, center) <= 100) != inside {
            inside.toggle()
            naive += 1
        }
        print("seed \(seed): \(events.count) events in 2 hours on the edge; the fix's position alone crossed it \(naive) times")
        #expect(naive > 50, "the scripted noise crosses the edge often")
        // Resting on the edge, in and out are both right; a storm is a change undone soon after.
        let gaps = zip(events.dropFirst(), events).map { $0.date.timeIntervalSince($1.date) }
        #expect(events.count <= 2 && gaps.allSatisfy { $0 >= 600 }, "\(events.map { "\($0.state) at \($0.date)" })")
    }

    @Test func aCarCrossingARegionIsToldWithinAFewSeconds() throws {
        var script = TrackScript(seed: 9)
        script.settle()
        script.move(for: 120, speed: 15) { t in (north: 0, east: -900 + 15 * t) }  // through a 300 m circle at 15 m/s
        let monitor = try LocationMonitor(named: "drive")
        try monitor.add(.circle(center: TrackScript.point(north: 0, east: 0), radius: 300), identifier: "town", assuming: .unsatisfied)
        let events = script.fixes.flatMap { monitor.evaluate($0) }
        #expect(events.map(\.state) == [.satisfied, .unsatisfied])
        // Truth: in at 40 s (-300 m), out at 80 s (+300 m); twice 11.4 m at 15 m/s is 1.5 s, plus a fix.
        let lags = zip(events.map { $0.date.timeIntervalSince(TrackScript.start) }, [40.0, 80.0]).map { $0 - $1 }
        print("driving at 15 m/s: events \(lags) s after the true crossings")
        #expect(lags.allSatisfy { (0...4).contains($0) }, "\(lags)")
    }

    @Test func aReceiverWalkingOutThenBackGivesOneExitAndOneEntry() throws {
        var script = TrackScript(seed: 7)
        script.settle()
        script.move(for: 300) { t in (north: 0, east: 50 + t * 0.5) }  // 50 m to 200 m from the centre at 0.5 m/s
        script.move(for: 300) { t in (north: 0, east: 200 - t * 0.5) }
        let monitor = try LocationMonitor(named: "walk")
        try monitor.add(.circle(center: TrackScript.point(north: 0, east: 0), radius: 100), identifier: "park", assuming: .satisfied)
        let events = script.fixes.flatMap { monitor.evaluate($0) }
        #expect(events.map(\.state) == [.unsatisfied, .satisfied])
        // Truth: out at 100 s (100 m), back in at 500 s. At 0.5 m/s the whole circle (11.4 m)
        // is across 23 s later; the noise can make it sooner or later.
        let lags = zip(events.map { $0.date.timeIntervalSince(TrackScript.start) }, [100.0, 500.0]).map { $0 - $1 }
        print("walking at 0.5 m/s: events \(lags) s after the true crossings")
        #expect(lags.allSatisfy { (0...60).contains($0) }, "\(lags)")
    }
}
