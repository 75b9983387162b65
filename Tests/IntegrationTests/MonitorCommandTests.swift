import Foundation
import LocationKeepAlive
import LocationKeepAliveMocks
import IntegrationSupport
import Testing

/// `keepalive monitor`, end to end: over a real gpsd its events are those of gpsd's own fixes;
/// over a replay, those of the log; bad conditions and state files are refused clearly.
@Suite(.timeLimit(.minutes(5)))
struct MonitorCommandTests {
    static let boat = NMEAFixture("bundg_zeus_9.log", folder: "tracks")

    /// Regions around the boat's track (its first, middle and last fixes), a polygon, one it never
    /// reaches, significant changes and visits.
    static let conditions = """
        {"start": {"type": "circle", "latitude": 52.850155, "longitude": 5.3136167, "radius": 150},
         "middle": {"type": "circle", "latitude": 52.8491, "longitude": 5.3112, "radius": 120},
         "end": {"type": "circle", "latitude": 52.84785, "longitude": 5.30835, "radius": 100},
         "square": {"type": "polygon", "vertices": [
            {"latitude": 52.8483, "longitude": 5.3092}, {"latitude": 52.8483, "longitude": 5.3108},
            {"latitude": 52.8495, "longitude": 5.3108}, {"latitude": 52.8495, "longitude": 5.3092}]},
         "far": {"type": "circle", "latitude": 52.9, "longitude": 5.4, "radius": 500},
         "moves": {"type": "significant-change"}, "visits": {"type": "visit"}}
        """

    static func writeConditions() throws -> URL {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("conditions-\(UUID().uuidString).json")
        try Data(conditions.utf8).write(to: file)
        return file
    }

    /// What the library makes of `fixes`: `identifier state time` per event.
    static func expectedEvents(of fixes: [Location]) throws -> [String] {
        let monitor = try LocationMonitor(named: "expected")
        let decoded = try JSONDecoder().decode([String: MonitorCondition].self, from: Data(conditions.utf8))
        try monitor.add(decoded)
        let time = ISO8601DateFormatter()
        time.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return fixes.flatMap { monitor.evaluate($0) }.map { "\($0.identifier) \($0.state) \(time.string(from: $0.date))" }
    }

    /// The events a `--json` run printed, as `identifier state time`.
    static func printedEvents(_ lines: [String]) throws -> [String] {
        try lines.compactMap { line in
            let object = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            guard object["class"] as? String == "event" else { return nil }
            return "\(object["identifier"]!) \(object["state"]!) \(object["time"]!)"
        }
    }

    @Test func overARealGPSDTheEventsAreThoseOfGPSDsOwnFixes() async throws {
        let keepalive = try Tools.keepalive
        let conditions = try Self.writeConditions()
        defer { try? FileManager.default.removeItem(at: conditions) }
        try await GatedGPSD.run(log: Self.boat.url) { gpsd in
            let interrupt = Interrupt()
            let printed = Locked(0)
            let cli = Task {
                try await runCommand(
                    keepalive.path,
                    ["monitor", "--gpsd", "localhost:\(gpsd.port)", "--conditions", conditions.path, "--json"],
                    interrupt: interrupt,
                    timeout: Tools.patience * 3,
                    onLine: { line in if line.contains("\"class\":\"event\"") { printed.withLock { $0 += 1 } } }
                )
            }
            defer { interrupt.fire() }
            // gpsd's own watcher and ours.
            #expect(try await gpsd.waitForWatchers(2))
            try await gpsd.go()
            let time = ISO8601DateFormatter()
            time.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            let fixes = try await gpsd.reports().compactMap { report -> Location? in
                guard report.mode >= 2, let lat = report.lat, let lon = report.lon else { return nil }
                return Location(
                    latitude: lat, longitude: lon, horizontalAccuracy: report.eph, speed: report.speed,
                    timestamp: report.time.flatMap { time.date(from: $0) }, mode: FixMode(rawValue: report.mode) ?? .noFix
                )
            }
            let expected = try Self.expectedEvents(of: fixes)
            #expect(expected.count >= 12, "\(expected)")
            // Every fix has reached gpsd's watcher; ours prints its last events a moment later.
            let deadline = ContinuousClock.now + Tools.patience
            while printed.withLock({ $0 }) < expected.count, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
            }
            interrupt.fire()
            let result = try await cli.value
            #expect(result.exitCode == 0, "\(result.error)")
            #expect(try Self.printedEvents(result.lines) == expected)
        }
    }

    @Test func overAReplayTheEventsAreThoseOfTheLog() async throws {
        let conditions = try Self.writeConditions()
        defer { try? FileManager.default.removeItem(at: conditions) }
        let result = try await runCommand(
            try Tools.keepalive.path,
            ["monitor", "--replay", Self.boat.url.path, "--speed", "0", "--conditions", conditions.path, "--json"]
        )
        #expect(result.exitCode == 0, "\(result.error)")
        var decoder = NMEADecoder(bytes: try Self.boat.bytes())
        var fixes: [Location] = []
        while let report = decoder.next() { if let fix = report.location { fixes.append(fix) } }
        let expected = try Self.expectedEvents(of: fixes)
        let printed = try Self.printedEvents(result.lines)
        #expect(printed == expected)
        // Each region decided outside at the second fix with a time, then entered and left.
        #expect(printed.filter { $0.hasPrefix("square ") || $0.hasPrefix("middle ") }.count == 6, "\(printed)")
        #expect(printed.first { $0.hasPrefix("moves ") } == "moves satisfied 2018-08-20T09:47:37.000Z")
    }

    @Test(arguments: [
        ("missing", nil, "cannot read the conditions file"),
        ("not JSON", "[1, 2", "is not a JSON object of conditions"),
        ("unknown type", #"{"x": {"type": "cone"}}"#, "unknown condition type \"cone\""),
        ("negative radius", #"{"home": {"type": "circle", "latitude": 52, "longitude": 5, "radius": -10}}"#,
         #""home": a region's radius must be a positive number of metres, not -10.0"#),
    ])
    func badConditionsAreRefusedNamingTheFile(name: String, contents: String?, message: String) async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("conditions-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        if let contents { try Data(contents.utf8).write(to: file) }
        let result = try await runCommand(
            try Tools.keepalive.path, ["monitor", "--replay", Self.boat.url.path, "--conditions", file.path]
        )
        #expect(result.exitCode == 1)
        #expect(result.error.contains(file.path), "\(result.error)")
        #expect(result.error.contains(message), "\(result.error)")
    }

    @Test func aDamagedStateFileIsRefusedAndLeftAsItIs() async throws {
        let conditions = try Self.writeConditions()
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("state-\(UUID().uuidString).json")
        defer {
            try? FileManager.default.removeItem(at: conditions)
            try? FileManager.default.removeItem(at: state)
        }
        try Data("{\"version\": 1, \"conditions\": [tr".utf8).write(to: state)
        let result = try await runCommand(
            try Tools.keepalive.path,
            ["monitor", "--replay", Self.boat.url.path, "--speed", "0", "--conditions", conditions.path, "--state", state.path]
        )
        #expect(result.exitCode == 1)
        #expect(result.error.contains("monitor file \(state.path) is damaged"), "\(result.error)")
        #expect(try String(contentsOf: state, encoding: .utf8) == "{\"version\": 1, \"conditions\": [tr")
    }

    @Test func aStateFileCarriesTheStatesOverToTheNextRun() async throws {
        let conditions = try Self.writeConditions()
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("state-\(UUID().uuidString).json")
        defer {
            try? FileManager.default.removeItem(at: conditions)
            try? FileManager.default.removeItem(at: state)
        }
        let arguments = ["monitor", "--replay", Self.boat.url.path, "--speed", "0", "--conditions", conditions.path, "--state", state.path, "--json"]
        let first = try await runCommand(try Tools.keepalive.path, arguments)
        #expect(first.exitCode == 0)
        #expect(try Self.printedEvents(first.lines).count >= 12)
        // The same log again: each region starts from where the last run left it ("end" inside,
        // the others outside), so the start of the log leaves "end" and enters "start", and "far"
        // is not decided a second time.
        let second = try await runCommand(try Tools.keepalive.path, arguments)
        #expect(second.exitCode == 0)
        let again = try Self.printedEvents(second.lines).map { $0.split(separator: " ").prefix(2).joined(separator: " ") }
        #expect(Array(again.prefix(2)).sorted() == ["end unsatisfied", "start satisfied"], "\(again)")
        #expect(!again.contains("far unsatisfied"), "\(again)")
    }
}
