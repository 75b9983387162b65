import FoundationEssentials
import Foundation
import KeepAliveCore
import KeepAliveMonitoring
import LocationKeepAliveMocks
import Testing

/// A monitor's file: conditions, states and last events survive a restart; a damaged file is
/// refused with its path and left as it is.
struct MonitorFileTests {
    static func temporaryFile() -> URL {
        URL(fileURLWithPath: NSTemporaryDirectory())
            .appendingPathComponent("monitor-\(UInt64.random(in: 0...UInt64.max))")
            .appendingPathComponent("places.json")
    }

    @Test func conditionsStatesAndLastEventsSurviveARestart() throws {
        let file = Self.temporaryFile()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let script = VisitTests.errand(seed: 8)
        let place = TrackScript.point(north: 9000, east: 0)
        var monitor: LocationMonitor? = try LocationMonitor(named: "places", file: file)
        try monitor!.add(.circle(center: place, radius: 300), identifier: "shop", assuming: .unsatisfied)
        try monitor!.add(.significantChange, identifier: "moves")
        try monitor!.add(.visit, identifier: "visits")
        // Up to the middle of the stop: entered the shop, arrived, three significant changes.
        let firstHalf = script.fixes[..<1200].flatMap { monitor!.evaluate($0) }
        #expect(firstHalf.map(\.identifier).sorted() == ["moves", "moves", "moves", "shop", "visits"])
        let before = try ["shop", "moves", "visits"].map { try #require(monitor!.record(for: $0)) }
        monitor = nil

        let restored = try LocationMonitor(named: "places", file: file)
        #expect(restored.identifiers == ["moves", "shop", "visits"])
        #expect(try ["shop", "moves", "visits"].map { try #require(restored.record(for: $0)) } == before)
        // Still in the shop, at the same place: nothing new, no second entry or arrival. Then the
        // drive away: departed (100 m), out of the shop (300 m), and two significant changes (500 m
        // surely, then 5 minutes later).
        let secondHalf = script.fixes[1200...].flatMap { restored.evaluate($0) }
        #expect(
            secondHalf.map { "\($0.identifier) \($0.state)" }
                == ["visits unsatisfied", "shop unsatisfied", "moves satisfied", "moves satisfied"]
        )
        #expect(secondHalf.first?.visit?.arrival == before[2].lastEvent?.visit?.arrival, "the same stay")
    }

    /// A circle given again with a new name (an OwnTracks waypoint's `desc` changed) keeps its
    /// state, so no second entry is told; its events carry the new name. Moved, it starts over.
    @Test func aRenamedCircleKeepsItsStateAndItsEventsCarryTheNewName() throws {
        let script = VisitTests.errand(seed: 8)
        let place = TrackScript.point(north: 9000, east: 0)
        let monitor = try LocationMonitor(named: "renamed")
        func shop(_ name: String, radius: Double = 300) -> MonitorCondition {
            .circle(CircularRegion(center: place, radius: radius, name: name, created: Date(timeIntervalSince1970: 1_700_000_000)))
        }
        try monitor.update(to: ["shop": shop("Shop")], assuming: .unsatisfied)
        let entered = script.fixes[..<1200].flatMap { monitor.evaluate($0) }
        #expect(entered.map { "\($0.identifier) \($0.state)" } == ["shop satisfied"])
        #expect(entered.first?.condition == shop("Shop"), "the event carries the condition as it was")
        try monitor.update(to: ["shop": shop("Corner shop")], assuming: .unsatisfied)
        #expect(monitor.record(for: "shop")?.state == .satisfied && monitor.record(for: "shop")?.condition == shop("Corner shop"))
        let left = script.fixes[1200...].flatMap { monitor.evaluate($0) }
        #expect(left.map { "\($0.identifier) \($0.state)" } == ["shop unsatisfied"], "no second entry")
        #expect(left.first?.condition == shop("Corner shop"))
        try monitor.update(to: ["shop": shop("Corner shop", radius: 301)], assuming: .unsatisfied)
        #expect(monitor.record(for: "shop")?.state == .unsatisfied && monitor.record(for: "shop")?.lastEvent == nil, "moved: added anew")
    }

    @Test(arguments: [
        ("garbage", "not JSON at all\u{0}"),
        ("no version", #"{"name":"places","conditions":[]}"#),
        ("future", #"{"version":99}"#),
    ])
    func aDamagedFileIsRefusedWithItsPathAndLeftAsItIs(name: String, contents: String) throws {
        let file = Self.temporaryFile()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(contents.utf8).write(to: file)
        let error = #expect(throws: MonitoringError.self) { try LocationMonitor(named: "places", file: file) }
        #expect(error?.code == .damagedFile)
        #expect(error?.message.contains(file.path) == true, "\(error?.message ?? "")")
        #expect(try Data(contentsOf: file) == Data(contents.utf8), "never overwritten")
    }

    @Test func aFileWithAConditionThatCannotBeMonitoredIsRefused() throws {
        let file = Self.temporaryFile()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        try LocationMonitor(named: "places", file: file).add(.circle(center: TrackScript.origin, radius: 100), identifier: "home")
        let saved = try String(contentsOf: file, encoding: .utf8)
        #expect(saved.contains(#""radius":100"#))
        let edited = saved.replacingOccurrences(of: #""radius":100"#, with: #""radius":-5"#)
        try Data(edited.utf8).write(to: file)
        let error = #expect(throws: MonitoringError.self) { try LocationMonitor(named: "places", file: file) }
        #expect(error?.code == .damagedFile)
        #expect(error?.message.contains("radius must be a positive number of metres, not -5.0") == true, "\(error?.message ?? "")")
        #expect(try String(contentsOf: file, encoding: .utf8) == edited)
    }

    @Test func aFileThatCannotBeWrittenRefusesTheChangeAndKeepsTheMonitorAsItWas() throws {
        let file = Self.temporaryFile()
        let folder = file.deletingLastPathComponent()
        defer { try? FileManager.default.removeItem(at: folder) }
        let monitor = try LocationMonitor(named: "places", file: file)
        try monitor.add(.significantChange, identifier: "moves")
        // The folder becomes a plain file: nothing can be written there, even by root.
        try FileManager.default.removeItem(at: folder)
        try Data("in the way".utf8).write(to: folder)
        let error = #expect(throws: MonitoringError.self) {
            try monitor.add(.circle(center: TrackScript.origin, radius: 100), identifier: "home")
        }
        #expect(error?.code == .fileUnwritable)
        #expect(error?.message.contains(file.path) == true)
        #expect(monitor.identifiers == ["moves"])
    }
}
