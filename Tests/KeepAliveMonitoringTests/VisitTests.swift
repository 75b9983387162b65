import FoundationEssentials
import KeepAliveCore
import KeepAliveMonitoring
import LocationKeepAliveMocks
import Testing

/// Visits (100 m, 5 minutes), stationary detection (25 m, 2 minutes) and the odometer.
struct VisitTests {
    /// Drive 10 minutes, stop 20 minutes at a place 9 km north, drive on.
    static func errand(seed: UInt64) -> TrackScript {
        var script = TrackScript(seed: seed)
        script.move(for: 600, speed: 15) { t in (north: 15 * t, east: 0) }
        script.settle()
        script.move(for: 1200, speed: 0) { _ in (north: 9000, east: 0) }
        script.move(for: 600, speed: 15) { t in (north: 9000, east: 15 * t) }
        return script
    }

    @Test(arguments: 1...3 as ClosedRange<UInt64>)
    func aStopIsAnArrivalAfterFiveMinutesAndADepartureWhenLeft(seed: UInt64) throws {
        let script = Self.errand(seed: seed)
        let monitor = try LocationMonitor(named: "visits")
        try monitor.add(.visit, identifier: "visits")
        let events = script.fixes.flatMap { monitor.evaluate($0) }
        try #require(events.map(\.state) == [.satisfied, .unsatisfied], "\(events.map(\.state))")
        let arrival = try #require(events[0].visit)
        let departure = try #require(events[1].visit)
        let place = TrackScript.point(north: 9000, east: 0)
        func seconds(_ date: Date?) -> Double { date!.timeIntervalSince(TrackScript.start) }
        // Arrived at 600 s (the first fix within 100 m may come a few seconds sooner, at 15 m/s).
        #expect((590...601).contains(seconds(arrival.arrival)), "\(seconds(arrival.arrival))")
        #expect(arrival.departure == nil)
        #expect(seconds(events[0].date) - seconds(arrival.arrival) == 300, "an arrival is told after 5 minutes there")
        #expect(greatCircleDistance(arrival.coordinate, place) < 15)
        // Left at 1800 s: the departure is the last fix within 100 m of the place (up to 7 s
        // later at 15 m/s), told once two fixes lie wholly beyond it.
        #expect((1799...1808).contains(seconds(departure.departure)), "\(seconds(departure.departure))")
        #expect((1800...1815).contains(seconds(events[1].date)))
        #expect(departure.arrival == arrival.arrival)
        print("seed \(seed): arrived \(seconds(arrival.arrival)) s, told \(seconds(events[0].date)) s; left \(seconds(departure.departure)) s, told \(seconds(events[1].date)) s; \(greatCircleDistance(departure.coordinate, place)) m from the place")
    }

    @Test func passingThroughIsNoVisit() throws {
        var script = TrackScript(seed: 4)
        script.move(for: 3600, speed: 1.4) { t in (north: 1.4 * t, east: 0) }  // walking, never stopping
        let monitor = try LocationMonitor(named: "visits")
        try monitor.add(.visit, identifier: "visits")
        #expect(script.fixes.flatMap { monitor.evaluate($0) }.isEmpty)
    }

    @Test func stationaryAfterTwoMinutesAtRestAndMovingOnceGone() throws {
        let script = Self.errand(seed: 5)
        let monitor = try LocationMonitor(named: "still")
        var stationary: [Int] = []
        for (second, fix) in script.fixes.enumerated() {
            monitor.evaluate(fix)
            if monitor.isStationary != (stationary.count % 2 == 1) { stationary.append(second) }
        }
        // Stationary from 2 minutes after the stop (600 s) until two fixes lie beyond 25 m after it ends.
        #expect(stationary.count == 2, "\(stationary)")
        #expect((718...721).contains(stationary.first ?? 0), "\(stationary)")
        #expect((1800...1806).contains(stationary.last ?? 0), "\(stationary)")
    }

    @Test func theOdometerReadsTheRouteAndNothingAtRest() throws {
        let script = Self.errand(seed: 6)
        let monitor = try LocationMonitor(named: "odometer")
        script.fixes.forEach { monitor.evaluate($0) }
        // 9 km north, 20 minutes at rest, 9 km east.
        #expect(abs(monitor.distanceTravelled - 18_000) < 100, "\(monitor.distanceTravelled)")

        let boat = try fixes(of: RegionTransitionTests.boat)
        let sailed = try LocationMonitor(named: "boat")
        boat.forEach { sailed.evaluate($0) }
        let path = zip(boat.dropFirst(), boat).map { greatCircleDistance($0.coordinate, $1.coordinate) }.reduce(0, +)
        print("boat: odometer \(sailed.distanceTravelled) m, the fixes' path \(path) m")
        #expect(abs(sailed.distanceTravelled - path) < 0.1 * path)

        let still = try fixes(of: .mt3339)
        let resting = try LocationMonitor(named: "still")
        still.forEach { resting.evaluate($0) }
        #expect(resting.distanceTravelled == 0)
    }
}
