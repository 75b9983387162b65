import Foundation
import FoundationXML
import KeepAliveCore
import KeepAliveJournal
import KeepAliveMonitoring
import Testing

/// Location events in the journal: in one sequence with the fixes, read back whole, queued for
/// the destinations with the regions inside at each record, exported as GPX waypoints and GeoJSON features, and a journal
/// written before events opens with its fixes.
@Suite struct JournalEventTests {
    /// Element names in document order, by Foundation's XML parser (which fails on malformed input).
    final class ElementList: NSObject, XMLParserDelegate {
        var names: [String] = []
        func parser(
            _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            names.append(name)
        }
    }

    static let start = Date(timeIntervalSince1970: 1_700_000_000)

    /// Fixes 0-5, with "home" entered at fix 2 and a visit begun at fix 4 (each after its fix).
    func journalWithEvents(_ folder: TemporaryFolder) throws -> (FixJournal, [MonitorEvent]) {
        let journal = try FixJournal(file: URL(fileURLWithPath: folder.file("j.sqlite")))
        let fixes = (0..<6).map { fix($0, at: Self.start + Double($0)) }
        let entered = MonitorEvent(
            identifier: "home, \"sweet\" <home>", state: .satisfied, date: Self.start + 2, location: fixes[2],
            condition: .circle(CircularRegion(center: Coordinate(latitude: 52, longitude: 4), radius: 50, name: "Home", created: Self.start))
        )
        let visit = Visit(coordinate: Coordinate(latitude: 52, longitude: 4), radius: 12.5, arrival: Self.start + 1)
        let arrived = MonitorEvent(
            identifier: "visits", state: .satisfied, date: Self.start + 1, location: fixes[4], visit: visit, condition: .visit
        )
        try journal.append(contentsOf: Array(fixes[0...2]))
        try journal.append(entered)
        try journal.append(contentsOf: Array(fixes[3...4]))
        try journal.append(arrived)
        try journal.append(fixes[5])
        return (journal, [entered, arrived])
    }

    func export(_ journal: FixJournal, _ format: TrackFormat) throws -> String {
        var bytes: [UInt8] = []
        try TrackExporter(format: format).export(journal) { bytes += $0 }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func eventsAreKeptInOneSequenceWithTheFixesAndReadBackWhole() throws {
        let folder = TemporaryFolder()
        let (journal, events) = try journalWithEvents(folder)
        let records = try journal.records(after: 0)
        #expect(records.map(\.sequence) == Array(1...8))
        #expect(records.map { $0.event?.identifier } == [nil, nil, nil, events[0].identifier, nil, nil, "visits", nil])
        #expect(records[3].event == events[0], "identifier, state, date and fix as appended")
        #expect(records[6].event == events[1], "with the visit")
        #expect(records[3].location == records[2].location, "an event's place is the fix that decided it")
        var seen: [Int64] = []
        try journal.forEachEvent { seen.append($0.sequence) }
        #expect(seen == [4, 7])
        // Reopened: the same.
        let reopened = try FixJournal(file: journal.file)
        #expect(try reopened.records(after: 0) == records)
    }

    @Test func destinationsQueueEventsInOrderWithTheRegionsInsideAtEachRecord() throws {
        let folder = TemporaryFolder()
        let (journal, events) = try journalWithEvents(folder)
        try journal.register(destination: "server", settings: "{}")
        let pending = try journal.pending(for: "server", limit: 100)
        #expect(pending.map(\.sequence) == Array(1...8))
        #expect(pending.map { $0.event?.identifier } == [nil, nil, nil, events[0].identifier, nil, nil, "visits", nil])
        #expect(try journal.status(of: "server").depth == 8, "fixes and events wait")
        // "home" is a circle, entered by record 4: inside from the next record on; a visit is no region.
        let inside = pending.map { $0.insideRegions.map(\.identifier) }
        let home = [events[0].identifier]
        #expect(inside == [[], [], [], [], home, home, home, home])
        // A queue read from the middle knows what was entered before it.
        try journal.markDelivered(pending.prefix(5), to: "server")
        let rest = try journal.pending(for: "server", limit: 100)
        #expect(rest.map(\.sequence) == [6, 7, 8] && rest.allSatisfy { $0.insideRegions.map(\.identifier) == home })
        // Left: no longer inside after the exit.
        let left = MonitorEvent(
            identifier: events[0].identifier, state: .unsatisfied, date: Self.start + 9, location: fix(9), condition: events[0].condition
        )
        try journal.append(left)
        try journal.append(fix(10))
        #expect(try journal.pending(for: "server", limit: 100).map { $0.insideRegions.count } == [1, 1, 1, 1, 0])
        try journal.markDelivered(try journal.pending(for: "server", limit: 100), to: "server")
        #expect(try journal.status(of: "server").depth == 0)
    }

    @Test func gpxHasAWaypointPerEventBeforeTheTrackOfFixes() throws {
        let folder = TemporaryFolder()
        let (journal, _) = try journalWithEvents(folder)
        let gpx = try export(journal, .gpx)
        let list = ElementList()
        let parser = XMLParser(data: Data(gpx.utf8))
        parser.delegate = list
        #expect(parser.parse(), "well-formed: \(parser.parserError.map { "\($0)" } ?? "")")
        let names = list.names
        #expect(names.filter { $0 == "wpt" }.count == 2)
        #expect(names.filter { $0 == "trkpt" }.count == 6, "the track has the fixes only")
        #expect(names.lastIndex(of: "wpt")! < names.firstIndex(of: "trk")!, "GPX 1.1: waypoints before tracks")
        #expect(gpx.contains("<name>home, &quot;sweet&quot; &lt;home&gt;</name><desc>home, &quot;sweet&quot; &lt;home&gt; &quot;Home&quot;: satisfied</desc>"))
        #expect(gpx.contains("<time>2023-11-14T22:13:21.000Z</time><name>visits</name><desc>visits: satisfied (arrived 2023-11-14T22:13:21.000Z)</desc>"))
    }

    @Test func geoJSONNDJSONAndCSVCarryTheEventsInOrder() throws {
        let folder = TemporaryFolder()
        let (journal, _) = try journalWithEvents(folder)
        let geojson = try JSONSerialization.jsonObject(with: Data(try export(journal, .geojson).utf8)) as! [String: Any]
        let features = geojson["features"] as! [[String: Any]]
        let properties = features.map { $0["properties"] as! [String: Any] }
        try #require(features.count == 8)
        #expect(properties.map { $0["event"] as? String } == [nil, nil, nil, "home, \"sweet\" <home>", nil, nil, "visits", nil])
        #expect(properties[3]["state"] as? String == "satisfied")
        #expect(properties[3]["regionName"] as? String == "Home" && properties[6]["regionName"] == nil)
        #expect(properties[6]["visitArrival"] as? String == "2023-11-14T22:13:21.000Z")
        let lines = try export(journal, .ndjson).split(separator: "\n")
        try #require(lines.count == 8)
        let object = try JSONSerialization.jsonObject(with: Data(lines[3].utf8)) as! [String: Any]
        #expect(object["event"] as? String == "home, \"sweet\" <home>" && object["sequence"] as? Int == 4)
        let csv = try export(journal, .csv).split(separator: "\n")
        #expect(csv[0].hasSuffix(",battery,event,state"))
        #expect(csv[4].hasSuffix(",\"home, \"\"sweet\"\" <home>\",satisfied"), "\(csv[4])")
        #expect(csv[1].hasSuffix(",,"), "a fix has no event")
    }

    @Test func aJournalFromBeforeEventsOpensWithItsFixesAndTakesEvents() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("old.sqlite")
        // The journal as the version before events wrote it.
        try await sqlite3(
            path,
            journalLayoutV1 + """
            INSERT INTO fix (uid, fixTime, recordedAt, latitude, longitude, mode) VALUES ('a', strftime('%s','now') - 5, strftime('%s','now'), 52.5, 4.5, 3);
            """
        )
        let journal = try FixJournal(file: URL(fileURLWithPath: path))
        let old = try journal.records(after: 0)
        try #require(old.count == 1, "the old fix is kept")
        #expect(old[0].id == "a" && old[0].location.latitude == 52.5 && old[0].event == nil)
        let event = MonitorEvent(identifier: "home", state: .unsatisfied, date: Self.start, location: old[0].location)
        let stored = try journal.append(event)
        #expect(stored.sequence == 2)
        #expect(try journal.records(after: 1).first?.event == event)
    }
}
