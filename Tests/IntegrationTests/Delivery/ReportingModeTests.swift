import Foundation
import LocationKeepAlive
import LocationKeepAliveMocks
import IntegrationSupport
import Testing

/// OwnTracks' monitoring modes on the monitoring strategy: the boat's replayed track, with two
/// waypoints it enters and leaves, journals exactly what each mode says (see `ReportingMode`).
@Suite(.timeLimit(.minutes(4)))
struct ReportingModeTests {
    /// `--mode` and its options, and what the journal must hold for it.
    struct Case: Sendable, CustomTestStringConvertible {
        var arguments: [String]
        var kind: ReportingMode.Kind
        var displacement = 100.0
        var interval = 300.0
        var testDescription: String { arguments.joined(separator: " ") }
    }

    static let cases = [
        Case(arguments: ["--mode", "quiet"], kind: .quiet),
        Case(arguments: ["--mode", "0"], kind: .manual),
        Case(arguments: ["--mode", "significant"], kind: .significant),
        Case(arguments: ["--mode", "move", "--move-displacement", "50", "--move-interval", "1h"], kind: .move, displacement: 50, interval: 3600),
        Case(arguments: ["--mode", "2", "--move-displacement", "100000", "--move-interval", "20s"], kind: .move, displacement: 100_000, interval: 20),
    ]

    /// What tells a fix apart in the service's output and in the journal (to 1e-7 degrees:
    /// Foundation's JSON parser on Linux may lose the last digit of a double).
    static func key(_ fix: Location) -> String {
        String(format: "%.7f,%.7f@", fix.latitude, fix.longitude) + (fix.timestamp.map { "\($0.timeIntervalSince1970)" } ?? "-")
    }

    /// The fixes `mode` journals of `fixes` (the watch's, in order), with the fixes of events
    /// (journaled before each event, unless journaled already): the mode's definition, said
    /// again here.
    static func expected(_ test: Case, fixes: [Location], eventFixes: Set<String>) -> [String] {
        var journaled: [String] = []
        var last: Location?
        for fix in fixes {
            if test.kind == .move {
                let moved = last.map { fix.distance(from: $0) >= test.displacement } ?? true
                var waited = false
                if let now = fix.timestamp, let then = last?.timestamp { waited = now.timeIntervalSince(then) >= test.interval }
                if last == nil || moved || waited {
                    journaled.append(key(fix))
                    last = fix
                }
            }
            if eventFixes.contains(key(fix)), last.map(key) != key(fix) {
                journaled.append(key(fix))
                last = fix
            }
        }
        return journaled
    }

    @Test(arguments: cases)
    func eachModeJournalsWhatItSays(_ test: Case) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("modes-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let waypoints = "\(folder)/waypoints.json"
        try OwnTracksTransitionTests.waypoints.write(toFile: waypoints, atomically: true, encoding: .utf8)
        let journal = "\(folder)/journal.sqlite"
        let service = try await DeliveryRuns.service(
            folder, journal: journal, deliver: [], log: "bundg_zeus_9.log", logFolder: "tracks", speed: "0",
            extra: ["--strategy", "monitoring", "--waypoints", waypoints] + test.arguments
        )
        let count = try OwnTracksTransitionTests.fixes().count
        let fixes = {
            service.output.split(separator: "\n").compactMap { line -> Location? in
                let json = DeliveryRuns.json(String(line))
                guard json["class"] as? String == "fix", let latitude = json["latitude"] as? Double,
                    let longitude = json["longitude"] as? Double
                else { return nil }
                return Location(latitude: latitude, longitude: longitude, timestamp: (json["time"] as? String).flatMap(DeliveryRuns.date))
            }
        }
        try await eventually("the \(count) fixes of the replay watched") { fixes().count >= count }
        await service.expectCleanStop()
        let records = try allRecords(journal)
        let events = records.compactMap(\.event)
        let journaledFixes = records.filter { $0.event == nil }.map { Self.key($0.location) }

        switch test.kind {
        case .quiet:
            #expect(records.isEmpty, "quiet: nothing watched, nothing journaled")
        case .manual:
            #expect(!events.isEmpty && events.allSatisfy { $0.identifier != "significant-change" })
        case .significant:
            #expect(events.contains { $0.identifier == "significant-change" }, "significant: significant changes watched")
        case .move: break
        }
        let expected = Self.expected(test, fixes: fixes(), eventFixes: Set(records.filter { $0.event != nil }.map { Self.key($0.location) }))
        #expect(journaledFixes == expected, "\(journaledFixes.count) journaled, \(expected.count) expected")
        if test.kind == .move, test.displacement == 50 {
            #expect(journaledFixes.count > Set(records.filter { $0.event != nil }.map(\.sequence)).count + 3, "move: fixes of its own between the events")
        }
        // Each event follows its fix.
        for (index, record) in records.enumerated() where record.event != nil {
            #expect(records[..<index].contains { $0.event == nil && Self.key($0.location) == Self.key(record.location) })
        }
    }

    @Test func badModesAreRefusedBeforeTheServiceStarts() async throws {
        for (arguments, message) in [
            (
                ["--strategy", "monitoring", "--mode", "fast"],
                "The value 'fast' is invalid for '--mode <mode>'. Please provide one of 'quiet', 'manual', 'significant' or 'move'"
            ),
            (["--strategy", "monitoring", "--mode", "move", "--move-displacement=-3"], "the displacement must be 0 to 100000 metres"),
            (["--strategy", "monitoring", "--mode", "move", "--move-interval", "0s"], "the interval must be 1 s to 86400 s"),
            (["--strategy", "monitoring", "--mode", "move", "--move-interval", "soon"], "The value 'soon' is invalid for '--move-interval <duration>'"),
            (["--mode", "quiet"], "--mode goes with --strategy monitoring"),
            (["--strategy", "monitoring", "--mode", "move", "--host"], "--mode move keeps the app watching"),
        ] {
            let result = try await runCommand(try Tools.keepalive.path, ["run", "--audio-device", "null"] + arguments)
            #expect(result.exitCode == 64, "\(arguments): \(result.error)")
            #expect(result.error.contains(message), "\(arguments): \(result.error)")
        }
    }
}
