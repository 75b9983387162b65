import Foundation
import LocationKeepAlive
import LocationKeepAliveMocks
import IntegrationSupport
import Testing

/// OwnTracks waypoints as the service's regions: the boat's replayed track enters and leaves
/// two of them, and a real mosquitto receives each `transition` once, in order with the
/// `location` messages, which carry `inregions` / `inrids` while inside.
@Suite(.timeLimit(.minutes(4)))
struct OwnTracksTransitionTests {
    static let boat = MonitorCommandTests.boat

    /// Around the boat's first fix (with a region id), its middle (without: its `tst` in hex
    /// identifies it), and a place it never goes.
    static let waypoints = """
        {"_type": "waypoints", "waypoints": [
          {"_type": "waypoint", "desc": "Harbour \\"Zeus\\"", "lat": 52.850155, "lon": 5.3136167, "rad": 150,
           "tst": 1610104395, "rid": "f7676c"},
          {"_type": "waypoint", "desc": "Middle buoy", "lat": "52.8491", "lon": "5.3112", "rad": "120", "tst": "1700000000"},
          {"_type": "waypoint", "desc": "Far away", "lat": 52.9, "lon": 5.4, "rad": 500, "tst": 1700000001, "rid": "far"}
        ]}
        """

    /// What the subscriber must receive for `records`, in order: a location per fix (with the
    /// regions entered so far), a transition per entry into or exit from a region.
    static func expectedMessages(_ records: [JournalRecord]) -> [(topic: String, id: String, inside: [String], event: MonitorEvent?)] {
        var inside: [String] = []
        var expected: [(topic: String, id: String, inside: [String], event: MonitorEvent?)] = []
        for record in records {
            let id = record.shortID
            guard let event = record.event else {
                expected.append(("owntracks/me/phone", id, inside.sorted(), nil))
                continue
            }
            let wasInside = inside.contains(event.identifier)
            if event.state == .satisfied, !wasInside {
                inside.append(event.identifier)
                expected.append(("owntracks/me/phone/event", id, [], event))
            } else if event.state == .unsatisfied, wasInside {
                inside.removeAll { $0 == event.identifier }
                expected.append(("owntracks/me/phone/event", id, [], event))
            }
        }
        return expected
    }

    static let names = ["f7676c": "Harbour \"Zeus\"", String(1_700_000_000, radix: 16): "Middle buoy", "far": "Far away"]
    static let created = ["f7676c": 1_610_104_395.0, String(1_700_000_000, radix: 16): 1_700_000_000.0, "far": 1_700_000_001.0]

    /// Checks one received message against the record it stands for.
    static func check(_ message: OwnTracksMessage, json: [String: Any], against expected: (topic: String, id: String, inside: [String], event: MonitorEvent?), record: JournalRecord) {
        #expect(message.topic == expected.topic)
        #expect(message.strings["_id"] == expected.id)
        #expect(message.strings["tid"] == "ph")
        guard let event = expected.event else {
            #expect(message.strings["_type"] == "location")
            let rids = json["inrids"] as? [String] ?? []
            #expect(rids == expected.inside, "inrids of \(expected.id)")
            #expect((json["inregions"] as? [String] ?? []) == expected.inside.map { names[$0]! })
            return
        }
        #expect(message.strings["_type"] == "transition")
        #expect(message.strings["event"] == (event.state == .satisfied ? "enter" : "leave"))
        #expect(message.strings["rid"] == event.identifier)
        #expect(message.strings["desc"] == names[event.identifier])
        #expect(message.fields["wtst"] == created[event.identifier])
        #expect(message.fields["tst"] == event.date.timeIntervalSince1970.rounded(.down))
        #expect(abs(message.fields["lat"]! - record.location.latitude) < 1e-7)
        #expect(abs(message.fields["lon"]! - record.location.longitude) < 1e-7)
        #expect(message.fields["acc"] == record.location.horizontalAccuracy.map { $0.rounded() })
        #expect(message.strings["t"] == "c")
    }

    static func json(_ line: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]) ?? [:]
    }

    /// The subscriber's raw `topic payload` lines, probes left out.
    static func received(_ subscriber: MosquittoSubscriber) -> [(message: OwnTracksMessage, json: [String: Any])] {
        subscriber.process.output.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, !parts[0].hasSuffix("/probe"),
                let message = OwnTracksMessage(topic: String(parts[0]), json: String(parts[1])), !message.isPresence
            else { return nil }
            return (message, json(String(parts[1])))
        }
    }

    /// How many fixes the boat's log holds, and the time of its last.
    static func fixes() throws -> (count: Int, last: Date) {
        var decoder = NMEADecoder(bytes: try boat.bytes())
        var fixes: [Location] = []
        while let report = decoder.next() { if let fix = report.location { fixes.append(fix) } }
        return (fixes.count, fixes.last!.timestamp!)
    }

    /// The service replaying the boat at `speed`, watching the waypoints, delivering to `broker`.
    func startService(_ broker: MosquittoBroker, speed: String) async throws -> (ChildProcess, journal: String) {
        let waypoints = "\(broker.directory)/waypoints.json"
        try Self.waypoints.write(toFile: waypoints, atomically: true, encoding: .utf8)
        let journal = "\(broker.directory)/journal.sqlite"
        let service = try await DeliveryRuns.service(
            broker.directory, journal: journal, deliver: ["home=mqtt://127.0.0.1:\(broker.port)/owntracks/me/phone?tid=ph"],
            log: "bundg_zeus_9.log", logFolder: "tracks", speed: speed, extra: ["--strategy", "monitoring", "--waypoints", waypoints]
        )
        return (service, journal)
    }

    @Test func eachEntryAndExitOfTwoWaypointsArrivesOnceInOrderWithTheLocations() async throws {
        let broker = try await MosquittoBroker()
        let subscriber = try await MosquittoSubscriber(broker)
        let (service, journal) = try await startService(broker, speed: "0")
        let fixes = try Self.fixes().count
        try await eventually("\(fixes) fixes and their events journaled and delivered") {
            (try? allRecords(journal).filter { $0.event == nil }.count) == fixes && (try? DeliveryRuns.depth(journal)) == 0
        }
        await service.expectCleanStop()
        let records = try allRecords(journal)
        let expected = Self.expectedMessages(records)
        let transitions = expected.compactMap(\.event).map { "\($0.identifier) \($0.state)" }
        // The two regions overlap: the boat is inside both for a while.
        #expect(transitions == ["f7676c satisfied", "6553f100 satisfied", "f7676c unsatisfied", "6553f100 unsatisfied"])
        #expect(records.contains { $0.event?.identifier == "far" }, "the first fix decided that the boat is outside Far away")
        try await eventually(
            "mosquitto_sub to see \(expected.count) messages",
            context: {
                let ids = Self.received(subscriber).map { $0.message.strings["_id"] ?? "?" }
                let missing = expected.map(\.id).filter { !ids.contains($0) }
                return "received \(ids.count); missing \(missing.count): \(missing.prefix(20)); the service's end:\n\(service.tail)"
            }
        ) { Self.received(subscriber).count >= expected.count }
        let received = Self.received(subscriber)
        #expect(received.count == expected.count, "each once; the service's end:\n\(service.tail)")
        let byID = Dictionary(uniqueKeysWithValues: records.map { ($0.shortID, $0) })
        for (got, wanted) in zip(received, expected) {
            Self.check(got.message, json: got.json, against: wanted, record: byID[wanted.id]!)
        }
        #expect(expected.contains { $0.inside == ["6553f100", "f7676c"] } && expected.contains { $0.inside == ["f7676c"] })
        #expect(expected.contains { $0.inside == ["6553f100"] })
    }

    @Test func throughBrokerRestartsEveryTransitionArrivesAtLeastOnceWithItsID() async throws {
        let broker = try await MosquittoBroker()
        let subscriber = try await MosquittoSubscriber(broker)
        let (service, journal) = try await startService(broker, speed: "20")
        for _ in 0..<3 {
            try await Task.sleep(for: .milliseconds(Int64.random(in: 800...1500)))  // pacing: the broker up a while
            await broker.stop()
            try await Task.sleep(for: .milliseconds(Int64.random(in: 200...500)))  // pacing: and down a while
            try await broker.start()
        }
        // Paced, a replay may drop a fix whose time repeats; the last one ends it.
        let last = try Self.fixes().last
        try await eventually("the log's last fix journaled", timeout: .seconds(60)) {
            (try? allRecords(journal).last { $0.event == nil })?.location.timestamp == last
        }
        await service.expectCleanStop()
        let drain = try await runCommand(try Tools.keepalive.path, ["upload", "--journal", journal, "--drain"], timeout: .seconds(60))
        #expect(drain.exitCode == 0, "\(drain.error)")
        let records = try allRecords(journal)
        let expected = Self.expectedMessages(records)
        #expect(expected.filter { $0.event != nil }.count == 4)
        try await eventually("every message at the subscriber", timeout: .seconds(20)) {
            Set(Self.received(subscriber).map { $0.message.strings["_id"] ?? "" }).count >= expected.count
        }
        // At least once, in order: the first arrival of each id follows the journal; a message
        // sent again is the same message, with the same id.
        let received = Self.received(subscriber)
        var firstArrivals: [String] = []
        var byID: [String: OwnTracksMessage] = [:]
        for (message, _) in received {
            let id = message.strings["_id"] ?? "?"
            if let earlier = byID[id] {
                #expect(earlier == message, "a message sent again is the same: \(id)")
            } else {
                byID[id] = message
                firstArrivals.append(id)
            }
        }
        #expect(firstArrivals == expected.map(\.id))
        let records8 = Dictionary(uniqueKeysWithValues: records.map { ($0.shortID, $0) })
        for wanted in expected {
            let got = try #require(received.first { $0.message.strings["_id"] == wanted.id })
            Self.check(got.message, json: got.json, against: wanted, record: records8[wanted.id]!)
        }
        print("broker restarted 3 times: \(received.count) messages received for \(expected.count) sent")
    }
}
