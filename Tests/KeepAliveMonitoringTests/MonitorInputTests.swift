import FoundationEssentials
import KeepAliveCore
import KeepAliveMonitoring
import LocationKeepAliveMocks
import Testing

/// Conditions that cannot be monitored: a clear error each, and nothing already there lost.
struct MonitorInputTests {
    static let here = TrackScript.origin

    @Test(arguments: [
        (MonitorCondition.circle(center: here, radius: -5), "positive number of metres, not -5.0"),
        (.circle(center: here, radius: 0), "positive number of metres, not 0.0"),
        (.circle(center: here, radius: .nan), "positive number of metres, not nan"),
        (.circle(center: here, radius: 6_371_000_000), "is it in metres?"),
        (.circle(center: Coordinate(latitude: 91, longitude: 0), radius: 100), "latitude from -90 to 90"),
        (.polygon([here, Coordinate(latitude: 52.86, longitude: 5.31)]), "at least 3 distinct vertices, not 2"),
        (.polygon([here, here, here, Coordinate(latitude: 52.86, longitude: 5.31)]), "at least 3 distinct vertices, not 2"),
        (.polygon([here, Coordinate(latitude: 52.86, longitude: 5.31), Coordinate(latitude: 54, longitude: 5.31)]), "span at most 50 km"),
        (.polygon([here, Coordinate(latitude: 52.86, longitude: 5.31), Coordinate(latitude: .infinity, longitude: 5.31)]), "latitude from -90 to 90"),
    ])
    func aConditionThatCannotBeMonitoredIsRefused(condition: MonitorCondition, message: String) throws {
        let monitor = try LocationMonitor(named: "input")
        try monitor.add(.circle(center: Self.here, radius: 100), identifier: "home", assuming: .satisfied)
        let error = #expect(throws: MonitoringError.self) { try monitor.add(condition, identifier: "bad") }
        #expect(error?.code == .invalidCondition)
        #expect(error?.message.contains("condition \"bad\"") == true)
        #expect(error?.message.contains(message) == true, "\(error?.message ?? "")")
        #expect(monitor.identifiers == ["home"])
        #expect(monitor.record(for: "home")?.state == .satisfied)
    }

    @Test func aBatchWithOneBadConditionAddsNone() throws {
        let monitor = try LocationMonitor(named: "input")
        #expect(throws: MonitoringError.self) {
            try monitor.add(["a": .circle(center: Self.here, radius: 100), "b": .circle(center: Self.here, radius: -1)])
        }
        #expect(monitor.identifiers.isEmpty)
        #expect(throws: MonitoringError.self) { try monitor.add(.visit, identifier: "") }
    }

    @Test func aMonitorTakes100000ConditionsAndRefusesOneMore() throws {
        let monitor = try LocationMonitor(named: "many")
        var conditions: [String: MonitorCondition] = [:]
        for index in 0..<LocationMonitor.maximumConditions {
            let point = TrackScript.point(north: Double(index / 300) * 50, east: Double(index % 300) * 50)
            conditions["r\(index)"] = .circle(center: point, radius: 20)
        }
        try monitor.add(conditions, assuming: .unsatisfied)
        let error = #expect(throws: MonitoringError.self) { try monitor.add(.significantChange, identifier: "one more") }
        #expect(error?.code == .tooManyConditions)
        #expect(error?.message.contains("at most 100000") == true, "\(error?.message ?? "")")
        #expect(monitor.identifiers.count == 100_000)
        // Replacing one that is there is no more.
        try monitor.add(.circle(center: Self.here, radius: 30), identifier: "r0")
        // And the fixes still find theirs: r301 is 50 m north and 50 m east of the origin.
        let spot = TrackScript.point(north: 50, east: 50)
        var events: [MonitorEvent] = []
        for second in 0..<3 {
            let fix = Location(
                latitude: spot.latitude, longitude: spot.longitude, horizontalAccuracy: 5,
                timestamp: TrackScript.start.addingTimeInterval(Double(second))
            )
            events += monitor.evaluate(fix)
        }
        #expect(events.filter { $0.state == .satisfied }.map(\.identifier) == ["r301"])
    }
}
