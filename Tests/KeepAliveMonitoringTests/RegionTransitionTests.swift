import FoundationEssentials
import KeepAliveCore
import KeepAliveMonitoring
import LocationKeepAliveMocks
import Testing

/// Regions on a real track (a sailing boat on the IJsselmeer, 149 fixes at 1 Hz, ±11.4 m):
/// every crossing, found by the test's own great-circle distances, gives exactly one event, of
/// the right kind, a few seconds after it.
struct RegionTransitionTests {
    static let boat = NMEAFixture("bundg_zeus_9.log", folder: "tracks")

    /// A crossing as the test sees it: the first fix on the new side.
    struct Crossing: Equatable {
        var date: Date
        var state: MonitorState
    }

    /// Where each fix lies (inside: true), by the test's own distance, and the crossings.
    static func crossings(of fixes: [Location], inside: (Coordinate) -> Bool) -> (initial: MonitorState, crossings: [Crossing]) {
        var side = inside(fixes[0].coordinate)
        var crossings: [Crossing] = []
        for fix in fixes.dropFirst() where inside(fix.coordinate) != side {
            side.toggle()
            crossings.append(Crossing(date: fix.timestamp!, state: side ? .satisfied : .unsatisfied))
        }
        return (inside(fixes[0].coordinate) ? .satisfied : .unsatisfied, crossings)
    }

    /// A circle smaller than the fixes' accuracy is never decided (no fix lies wholly inside):
    /// the monitor says so, once, rather than leave it silently undecided; one as large as the
    /// accuracy is entered.
    @Test func aCircleSmallerThanTheFixesAccuracyIsReportedUndecidable() throws {
        let fixes = try fixes(of: Self.boat)
        let here = fixes[75].coordinate
        let monitor = try LocationMonitor(named: "boat")
        try monitor.add(.circle(center: here, radius: 5), identifier: "tiny", assuming: .unsatisfied)
        try monitor.add(.circle(center: here, radius: 60), identifier: "wide", assuming: .unsatisfied)
        let events = fixes.flatMap { monitor.evaluate($0) }
        #expect(!events.contains { $0.identifier == "tiny" }, "no fix of ±11.4 m decides a 5 m circle")
        #expect(events.contains { $0.identifier == "wide" && $0.state == .satisfied })
        #expect(monitor.undecidableRegions == ["tiny"])
        try monitor.remove("tiny")
        #expect(monitor.undecidableRegions.isEmpty, "only what is monitored")
    }

    @Test func everyCrossingOfARealTrackGivesOneEventAFewSecondsLater() throws {
        let fixes = try fixes(of: Self.boat)
        try #require(fixes.count == 148)
        let middle = fixes[75].coordinate
        let side = fixes[40].coordinate
        // Regions the boat enters and leaves, enters only, leaves only, passes beside, and a polygon.
        let square = [(-0.0004, -0.0012), (-0.0004, 0.0004), (0.0008, 0.0004), (0.0008, -0.0012)].map {
            Coordinate(latitude: fixes[100].latitude + $0.0, longitude: fixes[100].longitude + $0.1)
        }
        let regions: [(String, MonitorCondition, (Coordinate) -> Bool)] = [
            ("middle", .circle(center: middle, radius: 120), { greatCircleDistance($0, middle) <= 120 }),
            ("beside", .circle(center: Coordinate(latitude: side.latitude + 0.0006, longitude: side.longitude), radius: 90), {
                greatCircleDistance($0, Coordinate(latitude: side.latitude + 0.0006, longitude: side.longitude)) <= 90
            }),
            ("start", .circle(center: fixes[0].coordinate, radius: 150), { greatCircleDistance($0, fixes[0].coordinate) <= 150 }),
            ("end", .circle(center: fixes[147].coordinate, radius: 100), { greatCircleDistance($0, fixes[147].coordinate) <= 100 }),
            ("far", .circle(center: Coordinate(latitude: 52.9, longitude: 5.4), radius: 500), { _ in false }),
            ("square", .polygon(square), { Self.isInside($0, square) }),
        ]
        let monitor = try LocationMonitor(named: "boat")
        var expected: [String: [Crossing]] = [:]
        for (identifier, condition, inside) in regions {
            let (initial, crossings) = Self.crossings(of: fixes, inside: inside)
            try monitor.add(condition, identifier: identifier, assuming: initial)
            expected[identifier] = crossings
        }
        #expect(expected.values.map(\.count).reduce(0, +) == 8, "the regions were chosen for 8 clean crossings")
        var events: [String: [MonitorEvent]] = [:]
        for fix in fixes {
            for event in monitor.evaluate(fix) { events[event.identifier, default: []].append(event) }
        }
        let slowest = fixes.compactMap(\.speed).min()!
        // Moving away, a region changes at the second fix twice its accuracy beyond the edge:
        // that far at the slowest speed, plus one fix; the square's edges are crossed at 30
        // degrees or more, so its fixes move away from them at half the speed or more.
        func latest(_ identifier: String) -> Double { 2 * 11.4 / slowest * (identifier == "square" ? 2 : 1) + 1 }
        var lags: [Double] = []
        for (identifier, crossings) in expected {
            let got = events[identifier] ?? []
            #expect(got.map(\.state) == crossings.map(\.state), "\(identifier): \(got.map(\.state)) for \(crossings.map(\.state))")
            for (event, crossing) in zip(got, crossings) {
                let lag = event.date.timeIntervalSince(crossing.date)
                lags.append(lag)
                #expect(lag >= 0 && lag <= latest(identifier), "\(identifier) \(crossing.state): \(lag) s after the crossing")
                #expect(monitor.record(for: identifier)?.lastEvent == got.last)
            }
        }
        print("region events on bundg_zeus_9.log: lags \(lags.sorted()) s after the crossing fix (latest allowed \(latest("middle")) s, the square's \(latest("square")) s)")
    }

    @Test func aRegionOfUnknownStateIsDecidedByTheFirstTwoFixesThatAgree() throws {
        let fixes = try fixes(of: Self.boat)
        let monitor = try LocationMonitor(named: "boat")
        try monitor.add(.circle(center: fixes[0].coordinate, radius: 150), identifier: "here")
        try monitor.add(.circle(center: fixes[147].coordinate, radius: 100), identifier: "there")
        #expect(monitor.evaluate(fixes[0]).isEmpty)
        let decided = monitor.evaluate(fixes[1])
        #expect(decided.map(\.identifier).sorted() == ["here", "there"])
        #expect(monitor.record(for: "here")?.state == .satisfied)
        #expect(monitor.record(for: "there")?.state == .unsatisfied)
    }

    @Test func aFixThatCountsForNothingChangesNothing() throws {
        let monitor = try LocationMonitor(named: "gate")
        let center = TrackScript.point(north: 0, east: 0)
        try monitor.add(.circle(center: center, radius: 100), identifier: "gate", assuming: .unsatisfied)
        func fix(_ seconds: Double, accuracy: Double?, mode: FixMode = .threeDimensional) -> Location {
            Location(
                latitude: center.latitude, longitude: center.longitude, horizontalAccuracy: accuracy,
                timestamp: TrackScript.start.addingTimeInterval(seconds), mode: mode
            )
        }
        // No time, no accuracy, too coarse, no position, and the same epoch twice: none of them count.
        let timeless = Location(latitude: center.latitude, longitude: center.longitude, horizontalAccuracy: 10)
        #expect(monitor.evaluate(timeless).isEmpty && monitor.evaluate(timeless).isEmpty)
        #expect(monitor.evaluate(fix(0, accuracy: nil)).isEmpty)
        #expect(monitor.evaluate(fix(1, accuracy: 150)).isEmpty)
        #expect(monitor.evaluate(fix(2, accuracy: 10, mode: .noFix)).isEmpty)
        #expect(monitor.evaluate(fix(3, accuracy: 10)).isEmpty)
        #expect(monitor.evaluate(fix(3, accuracy: 10)).isEmpty, "the same epoch again is not a second fix")
        #expect(monitor.evaluate(fix(4, accuracy: 10)).map(\.state) == [.satisfied])
    }

    @Test func regionsAcrossTheAntimeridianNearAPoleAndWideOnesAreFound() throws {
        let monitor = try LocationMonitor(named: "edges")
        let places: [(String, MonitorCondition, Coordinate)] = [
            ("antimeridian", .circle(center: Coordinate(latitude: -16.8, longitude: 179.9995), radius: 300),
             Coordinate(latitude: -16.8, longitude: -179.9995)),
            ("pole", .circle(center: Coordinate(latitude: 89.99, longitude: 0), radius: 5_000),
             Coordinate(latitude: 89.995, longitude: 120)),
            ("wide", .circle(center: Coordinate(latitude: 52.0, longitude: 5.0), radius: 50_000),
             Coordinate(latitude: 52.3, longitude: 5.3)),
            ("fiji", .polygon([
                Coordinate(latitude: -17.7, longitude: 179.99), Coordinate(latitude: -17.7, longitude: -179.99),
                Coordinate(latitude: -17.9, longitude: -179.99), Coordinate(latitude: -17.9, longitude: 179.99),
            ]), Coordinate(latitude: -17.8, longitude: -179.9995)),
        ]
        for (identifier, condition, _) in places { try monitor.add(condition, identifier: identifier, assuming: .unsatisfied) }
        var second = 0.0
        func fix(at spot: Coordinate) -> Location {
            second += 1
            return Location(
                latitude: spot.latitude, longitude: spot.longitude, horizontalAccuracy: 5,
                timestamp: TrackScript.start.addingTimeInterval(second)
            )
        }
        for (identifier, _, spot) in places {
            let events = (0..<3).flatMap { _ in monitor.evaluate(fix(at: spot)) }
            #expect(events.map(\.identifier) == [identifier])
            #expect(monitor.record(for: identifier)?.state == .satisfied)
            // Leave again, far away, so the next place starts from outside everywhere.
            let left = (0..<3).flatMap { _ in monitor.evaluate(fix(at: Coordinate(latitude: 0, longitude: 0))) }
            #expect(left.map(\.identifier) == [identifier])
            #expect(monitor.record(for: identifier)?.state == .unsatisfied)
        }
    }

    /// The test's own point-in-polygon (ray casting on latitude and longitude).
    static func isInside(_ point: Coordinate, _ polygon: [Coordinate]) -> Bool {
        var inside = false
        var j = polygon.count - 1
        for i in polygon.indices {
            let a = polygon[i]
            let b = polygon[j]
            if (a.latitude > point.latitude) != (b.latitude > point.latitude),
                point.longitude < (b.longitude - a.longitude) * (point.latitude - a.latitude) / (b.latitude - a.latitude) + a.longitude
            {
                inside.toggle()
            }
            j = i
        }
        return inside
    }
}
