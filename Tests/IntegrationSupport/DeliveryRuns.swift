package import Foundation
package import LocationKeepAlive
import LocationKeepAliveMocks
import Testing

/// What the delivery suites, and the suites beside them that run the service against brokers
/// and servers, share: the service on a replay, journals made up, commands published.
package enum DeliveryRuns {
    /// The OwnTracks device the suites' services publish as.
    package static let ownTracksDevice = "owntracks/me/phone"

    /// `keepalive run` on a replay, journaling and delivering, with always authorization.
    package static func service(
        _ folder: String,
        journal: String,
        deliver: [String],
        log: String = "ublox-8.log",
        logFolder: String = "nmea",
        speed: String = "0",
        extra: [String] = [],
        batching: [String] = ["--batch-latency", "200ms", "--commit-interval", "200ms"]
    ) async throws -> ChildProcess {
        let auth = "\(folder)/auth.json"
        _ = try await run(try Tools.keepalive.path, ["auth", "set", "always", "--app", "tracker", "--auth-file", auth])
        return try ChildProcess(
            try Tools.keepalive.path,
            ["run", "--app", "tracker", "--auth-file", auth, "--replay", NMEAFixture(log, folder: logFolder).url.path, "--speed", speed,
             "--json", "--journal", journal, "--audio-device", "null"]
                + batching + deliver.flatMap { ["--deliver", $0] } + extra,
            output: "\(folder)/service-\(UUID().uuidString.prefix(6)).out"
        )
    }

    /// What waits for delivery in `journal`, all destinations together. Throws until the
    /// deliverer has named its destinations in the journal: before that, nothing counts as
    /// waiting, and a test that stopped the service at a depth of 0 then stopped it before a
    /// single fix was sent (the first look of a loaded run came before the deliverer's start).
    package static func depth(_ journal: String) throws -> Int {
        let destinations = try FixJournal(file: URL(fileURLWithPath: journal), access: .readOnly).status().destinations
        guard !destinations.isEmpty else { throw ToolMissing("\(journal) names no destination yet: the deliverer has not started") }
        return destinations.map(\.depth).reduce(0, +)
    }

    package static func producedFixes(_ output: String) -> [String] {
        output.split(separator: "\n").filter { $0.contains(#""class":"fix""#) }.compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
            return "\(object["time"] ?? "")|\(object["latitude"] ?? "")"
        }
    }

    /// Publishes `payload` with `mosquitto_pub` (QoS 1) on the device's command topic, or `topic`.
    package static func command(_ payload: String, _ broker: MosquittoBroker, topic: String = ownTracksDevice + "/cmd", extra: [String] = []) async throws {
        let file = "\(broker.directory)/command-\(UUID().uuidString.prefix(6))"
        try payload.write(toFile: file, atomically: true, encoding: .utf8)
        let result = try await runCommand(
            "/usr/bin/mosquitto_pub", ["-h", broker.address, "-p", "\(broker.port)", "-q", "1", "-t", topic, "-f", file] + extra
        )
        #expect(result.exitCode == 0, "mosquitto_pub: \(result.error)")
    }

    package static func date(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)
    }

    package static func json(_ text: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]) ?? [:]
    }

    /// A journal with `count` moving fixes, one a second.
    package static func journal(_ count: Int) throws -> (path: String, records: [JournalRecord]) {
        let path = NSTemporaryDirectory() + "http-\(UUID().uuidString.prefix(8))/journal.sqlite"
        let journal = try FixJournal(file: URL(fileURLWithPath: path), battery: { 64 })
        let records = try journal.append(contentsOf: (0..<count).map { index in
            Location(
                latitude: 47.1 + Double(index) * 1e-4, longitude: 8.5, altitudeMSL: 412.6, horizontalAccuracy: 3.4,
                verticalAccuracy: 5.5, speed: 13.9, course: 182.25,
                timestamp: Date(timeIntervalSince1970: 1_700_000_000 + Double(index)), mode: .threeDimensional
            )
        })
        return (path, records)
    }

    /// A journal of 6 fixes with events after fixes 1 (outside "far": never entered), 2 (entered
    /// "home"), 3 (a significant change) and 4 (left "home").
    package static func journalWithRegionEvents() throws -> (path: String, records: [JournalRecord]) {
        let (path, _) = try journal(0)
        let journal = try FixJournal(file: URL(fileURLWithPath: path))
        let home = MonitorCondition.circle(
            CircularRegion(center: Coordinate(latitude: 47.1, longitude: 8.5), radius: 200, name: "Home", created: Date(timeIntervalSince1970: 1_600_000_000))
        )
        let far = MonitorCondition.circle(CircularRegion(center: Coordinate(latitude: 40, longitude: 8), radius: 200))
        for index in 0..<6 {
            let fix = Location(
                latitude: 47.1 + Double(index) * 1e-3, longitude: 8.5, horizontalAccuracy: 3.4,
                timestamp: Date(timeIntervalSince1970: 1_700_000_000 + Double(index)), mode: .threeDimensional
            )
            try journal.append(fix)
            let event: (String, MonitorState, MonitorCondition)? =
                switch index {
                case 1: ("far", .unsatisfied, far)
                case 2: ("home", .satisfied, home)
                case 3: ("moves", .satisfied, .significantChange)
                case 4: ("home", .unsatisfied, home)
                default: nil
                }
            if let (identifier, state, condition) = event {
                try journal.append(MonitorEvent(identifier: identifier, state: state, date: fix.timestamp!, location: fix, condition: condition))
            }
        }
        return (path, try allRecords(path))
    }

    /// Decrypts each `topic payload` line of `input` with `key` (zero-padded to 32 bytes, as
    /// OwnTracks does) and prints `topic plaintext`, or `topic ERROR reason`.
    package static let decrypter = """
        import base64, json, sys
        from nacl.secret import SecretBox
        from nacl.exceptions import CryptoError
        key = sys.argv[2].encode()[:32].ljust(32, b"\\0")
        box = SecretBox(key)
        for line in open(sys.argv[1]):
            topic, _, payload = line.rstrip("\\n").partition(" ")
            if topic.endswith("/probe"):
                continue
            message = json.loads(payload)
            try:
                assert set(message) == {"_type", "data"} and message["_type"] == "encrypted", payload
                print(topic, box.decrypt(base64.b64decode(message["data"])).decode())
            except CryptoError as error:
                print(topic, "ERROR", error)
        """

    package static func requirePyNaCl() async throws {
        let probe = try await runCommand("/usr/bin/python3", ["-c", "import nacl.secret"])
        guard probe.exitCode == 0 else {
            throw ToolMissing("PyNaCl is missing (the tests' independent decrypter): sudo apt-get install -y python3-nacl (or scripts/setup)")
        }
    }

    /// What the subscriber received, but for the commands it saw, decrypted with `key`.
    package static func decrypt(_ subscriber: MosquittoSubscriber, key: String, in directory: String) async throws -> [String] {
        let input = "\(directory)/received-\(UUID().uuidString.prefix(6))"
        let received = subscriber.process.output.split(separator: "\n").filter { !($0.split(separator: " ").first ?? "").hasSuffix("/cmd") }
        try received.joined(separator: "\n").appending("\n").write(toFile: input, atomically: true, encoding: .utf8)
        let result = try await runCommand("/usr/bin/python3", ["-c", decrypter, input, key])
        #expect(result.exitCode == 0, "\(result.error)")
        return result.lines
    }
}
