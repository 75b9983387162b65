import Foundation
import FoundationXML
import LocationKeepAlive
import LocationKeepAliveMocks
import IntegrationSupport
import Testing

/// `keepalive run --strategy monitoring` alone: its own monitor watches the source, and every
/// event goes through the journal after the fix that decided it, in order, and out again as
/// GPX waypoints and GeoJSON features. Bad options and conditions are refused clearly.
@Suite(.timeLimit(.minutes(3)))
struct RunMonitoringTests {
    static let boat = MonitorCommandTests.boat

    /// Element names in document order, by Foundation's XML parser (none for malformed XML).
    static func elementNames(_ xml: String) -> [String] {
        final class Names: NSObject, XMLParserDelegate {
            var names: [String] = []
            func parser(
                _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]
            ) {
                names.append(name)
            }
        }
        let names = Names()
        let parser = XMLParser(data: Data(xml.utf8))
        parser.delegate = names
        return parser.parse() ? names.names : []
    }

    /// Runs the service over the boat log until it has printed `fixes` fixes and `events` events
    /// (each printed after it was journaled), then stops it.
    func runService(_ arguments: [String], fixes: Int = 0, events: Int) async throws -> CommandResult {
        let printed = Locked((fixes: 0, events: 0))
        let interrupt = Interrupt()
        let result = try await runCommand(
            try Tools.keepalive.path,
            ["run", "--replay", Self.boat.url.path, "--speed", "0", "--audio-device", "null", "--json"] + arguments,
            interrupt: interrupt,
            timeout: Tools.patience
        ) { line in
            let done = printed.withLock { printed in
                if line.contains("\"class\":\"fix\"") { printed.fixes += 1 }
                if line.contains("\"class\":\"event\"") { printed.events += 1 }
                return printed.fixes >= fixes && printed.events >= events
            }
            if done { interrupt.fire() }
        }
        return result
    }

    @Test func theServiceJournalsEachEventAfterItsFixAndExportsThem() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("runmon-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let keepalive = try Tools.keepalive.path
        let auth = folder.appendingPathComponent("auth.json").path
        _ = try await runCommand(keepalive, ["auth", "set", "always", "--app", "tracker", "--auth-file", auth])
        let conditions = folder.appendingPathComponent("conditions.json")
        try Data(MonitorCommandTests.conditions.utf8).write(to: conditions)
        let journalFile = folder.appendingPathComponent("journal.sqlite")

        var decoder = NMEADecoder(bytes: try Self.boat.bytes())
        var fixes: [Location] = []
        while let report = decoder.next() { if let fix = report.location { fixes.append(fix) } }
        let expected = try MonitorCommandTests.expectedEvents(of: fixes)
        #expect(expected.count >= 12)

        let result = try await runService(
            [
                "--app", "tracker", "--auth-file", auth, "--strategy", "monitoring", "--conditions", conditions.path,
                "--monitor-state", folder.appendingPathComponent("state.json").path, "--journal", journalFile.path,
            ],
            fixes: fixes.count,
            events: expected.count
        )
        #expect(result.exitCode == 0, "\(result.error)")
        #expect(try MonitorCommandTests.printedEvents(result.lines) == expected, "the events of the log, as `keepalive monitor` tells them")

        // The journal: every fix, and each event after the fix that decided it.
        let journal = try FixJournal(file: journalFile)
        let records = try journal.records(after: 0, limit: 10_000)
        let events = records.filter { $0.event != nil }
        let time = ISO8601DateFormatter()
        time.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        #expect(events.map { "\($0.event!.identifier) \($0.event!.state) \(time.string(from: $0.event!.date))" } == expected)
        for (index, record) in records.enumerated() where record.event != nil {
            let decidingFix = records[..<index].last { $0.event == nil }
            #expect(decidingFix?.location == record.location, "event \(record.sequence) follows its fix")
        }
        #expect(records.filter { $0.event == nil }.count == fixes.count, "every fix of the log is kept")

        // Exported: a waypoint per event before the track; a feature per fix and per event.
        let gpx = try await runCommand(keepalive, ["export", "--journal", journalFile.path, "--format", "gpx"])
        #expect(gpx.exitCode == 0, "\(gpx.error)")
        let names = Self.elementNames(gpx.lines.joined(separator: "\n"))
        #expect(names.filter { $0 == "wpt" }.count == expected.count)
        #expect(names.filter { $0 == "trkpt" }.count == fixes.count)
        #expect(names.lastIndex(of: "wpt")! < names.firstIndex(of: "trk")!)
        let geojson = try await runCommand(keepalive, ["export", "--journal", journalFile.path, "--format", "geojson"])
        let collection = try #require(
            JSONSerialization.jsonObject(with: Data(geojson.lines.joined(separator: "\n").utf8)) as? [String: Any]
        )
        let features = try #require(collection["features"] as? [[String: Any]])
        let labels = features.compactMap { feature -> String? in
            let properties = feature["properties"] as! [String: Any]
            guard let event = properties["event"] as? String else { return nil }
            return "\(event) \(properties["state"]!) \(properties["eventTime"]!)"
        }
        #expect(labels == expected)
        #expect(features.count == fixes.count + expected.count)
    }

    @Test(arguments: [
        (["--strategy", "monitoring"], "--strategy monitoring needs --conditions FILE"),
        (["--conditions", "/tmp/c.json"], "--conditions, --waypoints and --assume-outside go with --strategy monitoring"),
        (["--waypoints", "/tmp/w.json"], "--conditions, --waypoints and --assume-outside go with --strategy monitoring"),
        (["--strategy", "monitoring", "--waypoints", ""], "--waypoints needs a file"),
        (["--strategy", "monitoring", "--conditions", "/tmp/c.json", "--host", "--monitor-state", "/tmp/s.json"],
         "--monitor-state is for the service alone"),
    ])
    func badOptionsAreRefused(arguments: [String], message: String) async throws {
        let result = try await runCommand(try Tools.keepalive.path, ["run", "--replay", Self.boat.url.path] + arguments)
        #expect(result.exitCode == 64)
        #expect(result.error.contains(message), "\(result.error)")
    }

    /// `--waypoints` without a journal: read before the service starts, and watched by their
    /// region ids.
    @Test func waypointsAreWatchedWithoutAJournal() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("waypoints-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(OwnTracksTransitionTests.waypoints.utf8).write(to: file)
        let auth = file.path + ".auth"
        defer { try? FileManager.default.removeItem(atPath: auth) }
        _ = try await runCommand(try Tools.keepalive.path, ["auth", "set", "always", "--app", "tracker", "--auth-file", auth])
        let result = try await runService(
            ["--app", "tracker", "--auth-file", auth, "--strategy", "monitoring", "--waypoints", file.path], events: 6
        )
        #expect(result.exitCode == 0, "\(result.error)")
        let events = try MonitorCommandTests.printedEvents(result.lines).map { $0.split(separator: " ").prefix(2).joined(separator: " ") }
        #expect(events.filter { !$0.hasPrefix("far ") && !$0.hasPrefix("6553f100 unsatisfied") }.prefix(3) == [
            "f7676c satisfied", "6553f100 satisfied", "f7676c unsatisfied",
        ])
        #expect(events.last == "6553f100 unsatisfied")
        #expect(result.lines.filter { $0.contains("\"started\"") }.count == 1, "started once, after the relaunch")
    }

    @Test func badConditionsAreRefusedNamingTheFileBeforeAnythingRuns() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("conditions-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(#"{"home": {"type": "circle", "latitude": 52, "longitude": 5, "radius": -10}}"#.utf8).write(to: file)
        let result = try await runService(["--strategy", "monitoring", "--conditions", file.path], events: 1)
        #expect(result.exitCode == 1)
        #expect(result.error.contains(file.path), "\(result.error)")
        #expect(result.error.contains("a region's radius must be a positive number of metres"), "\(result.error)")
        #expect(!result.lines.contains { $0.contains("\"started\"") }, "refused before it started")
    }
}
