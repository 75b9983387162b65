import Foundation
import LocationKeepAlive
import LocationKeepAliveMocks
import IntegrationSupport
import Testing

/// OwnTracks remote commands and presence against a real mosquitto: commands published with
/// `mosquitto_pub` on `owntracks/me/phone/cmd`, answers and presence read with `mosquitto_sub`.
@Suite(.timeLimit(.minutes(4)))
struct OwnTracksCommandTests {
    static let device = DeliveryRuns.ownTracksDevice


    /// The service's JSON lines.
    static func lines(_ service: ChildProcess) -> [[String: Any]] {
        service.output.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// What the service said of commands, with its own time for each.
    static func notes(_ service: ChildProcess) -> [(time: Date, text: String)] {
        lines(service).compactMap { line in
            guard line["event"] as? String == "decision", let text = line["decision"] as? String,
                text.hasPrefix(device) || text.hasPrefix("http://"),
                let time = (line["time"] as? String).flatMap(DeliveryRuns.date)
            else { return nil }
            return (time, text)
        }
    }

    /// When the service saw each batch acknowledged, on its own clock.
    static func deliveries(_ service: ChildProcess) -> [Date] {
        lines(service).compactMap { line in
            guard line["event"] as? String == "delivery", line["delivered"] != nil else { return nil }
            return (line["time"] as? String).flatMap(DeliveryRuns.date)
        }
    }


    /// Waits for the device's session, the `count`th time: its retained status `online` (from
    /// the presence's connection) and, on its own connection, its subscription to the command
    /// topic (until then a command finds no session to queue in, and a kill leaves no will).
    static func waitForSession(
        _ subscriber: MosquittoSubscriber, _ broker: MosquittoBroker, count: Int = 1, key: String? = nil, _ service: ChildProcess
    ) async throws {
        try await eventually("the device's session (its status)\n\(service.tail)") {
            states(subscriber, key: key).filter { $0 == "online" }.count >= count
        }
        try await eventually("the device's session (its subscription to the commands)\n\(service.tail)\n\(broker.log)") {
            broker.subscriptions(of: "keepalive-me-phone-device", to: device + "/cmd") >= count
        }
    }

    /// The states the device's statuses said, in order (opened with `key` when sealed).
    static func states(_ subscriber: MosquittoSubscriber, key: String? = nil) -> [String] {
        received(subscriber, on: device + "/status").map { status in
            var status = status
            if let key, let sealed = try? JSONSerialization.data(withJSONObject: status),
                let opened = try? OwnTracksEncryption(secret: key).open(sealed)
            {
                status = DeliveryRuns.json(String(decoding: opened, as: UTF8.self))
            }
            return (status["linux"] as? [String: Any])?["state"] as? String ?? "?"
        }
    }

    /// The device's retained status, as a subscriber that comes now is told it.
    static func retainedStatus(_ broker: MosquittoBroker) async throws -> [String: Any] {
        let late = try await runCommand(
            "/usr/bin/mosquitto_sub", ["-h", broker.address, "-p", "\(broker.port)", "-t", device + "/status", "-C", "1", "-W", "10"]
        )
        return (DeliveryRuns.json(late.lines.first ?? "")["linux"] as? [String: Any]) ?? [:]
    }


    /// The payloads received on `topic`, as JSON objects.
    static func received(_ subscriber: MosquittoSubscriber, on topic: String) -> [[String: Any]] {
        subscriber.process.output.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, parts[0] == topic else { return nil }
            return DeliveryRuns.json(String(parts[1]))
        }
    }

    /// The region ids of a waypoints document.
    static func regionIDs(_ document: [String: Any]) -> [String] {
        (document["waypoints"] as? [[String: Any]] ?? []).map { $0["rid"] as? String ?? "tst \($0["tst"] ?? "?")" }
    }

    static func fileIDs(_ path: String) throws -> [String] {
        regionIDs(DeliveryRuns.json(try String(contentsOfFile: path, encoding: .utf8)))
    }

    static func destination(_ broker: MosquittoBroker) -> String { "home=mqtt://127.0.0.1:\(broker.port)/owntracks/me/phone?tid=ph" }

    @Test func reportLocationPublishesAFreshFixAtOnceEachTimeItIsAsked() async throws {
        let broker = try await MosquittoBroker()
        let subscriber = try await MosquittoSubscriber(broker)
        let journal = "\(broker.directory)/journal.sqlite"
        // In the background with no strategy the service publishes nothing by itself.
        let service = try await DeliveryRuns.service(
            broker.directory, journal: journal, deliver: [Self.destination(broker)], speed: "1",
            extra: ["--loop", "--strategy", "none", "--background"]
        )
        try await Self.waitForSession(subscriber, broker, service)
        for round in 1...3 {
            try await DeliveryRuns.command(#"{"_type": "cmd", "action": "reportLocation"}"#, broker)
            try await eventually("the answer to reportLocation \(round)\n\(service.tail)") { subscriber.messages.count >= round }
            try await Task.sleep(for: .milliseconds(1500))  // pacing: the replay moves on, the next answer is a new fix
        }
        await service.expectCleanStop()
        let answers = subscriber.messages
        let lines = service.output.split(separator: "\n").filter { !$0.contains(#""class":"fix""#) }.joined(separator: "\n")
        #expect(answers.count == 3, "one location for each command, nothing else; the service's lines but its fixes:\n\(lines)")
        #expect(answers.allSatisfy { $0.topic == Self.device && $0.strings["_type"] == "location" })
        let times = answers.compactMap { $0.fields["tst"] }
        #expect(times.count == 3 && zip(times, times.dropFirst()).allSatisfy { $0 < $1 }, "each a fresh fix, never the last one again: \(times)")
        let records = try allRecords(journal)
        #expect(records.map { $0.shortID } == answers.compactMap { $0.strings["_id"] }, "each journaled, then published")
        // Published at once: from the command's arrival to the broker's acknowledgement, on the
        // service's own clock (the replay gives a fix a second).
        let notes = Self.notes(service)
        let asked = notes.filter { $0.text.hasSuffix("reportLocation received") }.map(\.time)
        #expect(asked.count == 3)
        #expect(notes.filter { $0.text.contains("reportLocation answered with the fix of") }.count == 3)
        let acknowledged = Self.deliveries(service)
        for time in asked {
            let delivered = acknowledged.first { $0 >= time }
            #expect(delivered.map { $0.timeIntervalSince(time) <= 2 } == true, "asked at \(time), delivered at \(String(describing: delivered))")
        }
    }

    /// The boat starts in its harbour; a waypoint set there while it runs is entered at once.
    static let harbour = """
        {"_type": "waypoint", "desc": "Harbour", "lat": 52.850155, "lon": 5.3136167, "rad": 300, "tst": 1610104395, "rid": "f7676c"}
        """
    static let far = #"{"_type": "waypoint", "desc": "Far away", "lat": 52.9, "lon": 5.4, "rad": 500, "tst": 1700000001, "rid": "far"}"#

    static func boatService(_ broker: MosquittoBroker, waypoints: String) async throws -> ChildProcess {
        try await DeliveryRuns.service(
            broker.directory, journal: "\(broker.directory)/journal.sqlite", deliver: [destination(broker)],
            log: "bundg_zeus_9.log", logFolder: "tracks", speed: "1",
            extra: ["--loop", "--strategy", "monitoring", "--waypoints", waypoints]
        )
    }

    static func entries(_ subscriber: MosquittoSubscriber, of region: String) -> Int {
        received(subscriber, on: device + "/event").filter { $0["rid"] as? String == region && $0["event"] as? String == "enter" }.count
    }

    @Test func setWaypointsChangesTheRegionsWithoutARestartAndARestartKeepsThem() async throws {
        let broker = try await MosquittoBroker()
        let subscriber = try await MosquittoSubscriber(broker)
        let file = "\(broker.directory)/waypoints.json"
        try #"{"_type": "waypoints", "waypoints": [\#(Self.far)]}"#.write(toFile: file, atomically: true, encoding: .utf8)
        var service = try await Self.boatService(broker, waypoints: file)
        try await Self.waitForSession(subscriber, broker, service)

        try await DeliveryRuns.command(
            #"{"_type": "cmd", "action": "setWaypoints", "waypoints": {"_type": "waypoints", "waypoints": [\#(Self.harbour), \#(Self.far)]}}"#,
            broker
        )
        try await eventually("the harbour entered, without a restart\n\(service.tail)") { Self.entries(subscriber, of: "f7676c") >= 1 }
        #expect(try Self.fileIDs(file) == ["f7676c", "far"], "kept in the --waypoints file")
        try await DeliveryRuns.command(#"{"_type": "cmd", "action": "waypoints"}"#, broker)
        try await eventually("the waypoints published") { !Self.received(subscriber, on: Self.device + "/waypoints").isEmpty }
        #expect(Self.regionIDs(Self.received(subscriber, on: Self.device + "/waypoints")[0]) == ["f7676c", "far"])
        await service.expectCleanStop()

        // Restarted with the same file: the harbour is watched (decided inside again, without a
        // state file; no second transition, the journal knowing the boat was inside).
        service = try await Self.boatService(broker, waypoints: file)
        try await Self.waitForSession(subscriber, broker, count: 2, service)
        try await eventually("the harbour watched after the restart\n\(service.tail)") {
            Self.lines(service).contains { $0["class"] as? String == "event" && $0["identifier"] as? String == "f7676c" }
        }
        #expect(Self.entries(subscriber, of: "f7676c") == 1)
        // An empty list (what a Recorder's reply file can hold) removes them all, and says so.
        try await DeliveryRuns.command(#"{"_type": "cmd", "action": "setWaypoints", "waypoints": {"_type": "waypoints", "waypoints": []}}"#, broker)
        try await eventually("the waypoints removed") {
            Self.notes(service).contains { $0.text.hasSuffix("setWaypoints with an empty list: all 2 waypoints removed, none watched (as clearWaypoints)") }
        }
        #expect(try Self.fileIDs(file) == [])
        #expect(service.output.contains("setWaypoints with an empty list removed every waypoint"), "a warning in the log")
        try await DeliveryRuns.command(#"{"_type": "cmd", "action": "clearWaypoints"}"#, broker)
        try await eventually("the waypoints cleared") { Self.notes(service).contains { $0.text.hasSuffix("clearWaypoints: all 0 waypoints removed, none watched") } }
        try await DeliveryRuns.command(#"{"_type": "cmd", "action": "waypoints"}"#, broker)
        try await eventually("the empty set published") { Self.received(subscriber, on: Self.device + "/waypoints").count >= 2 }
        #expect(Self.regionIDs(Self.received(subscriber, on: Self.device + "/waypoints")[1]) == [])
        await service.expectCleanStop()
        #expect(!Self.notes(service).contains { $0.text.contains("not done") })
    }

    @Test func badCommandsAreIgnoredWithTheirReasonAndChangeNothing() async throws {
        let broker = try await MosquittoBroker()
        let subscriber = try await MosquittoSubscriber(broker)
        let file = "\(broker.directory)/waypoints.json"
        let original = #"{"_type": "waypoints", "waypoints": [\#(Self.far)]}"#
        try original.write(toFile: file, atomically: true, encoding: .utf8)
        // A retained command is the broker's old copy, given to each new subscription: the
        // device's subscription gets it with the retained flag, and ignores it.
        try await DeliveryRuns.command(#"{"_type": "cmd", "action": "reportLocation"}"#, broker, extra: ["-r"])
        let service = try await Self.boatService(broker, waypoints: file)
        try await Self.waitForSession(subscriber, broker, service)

        func setWaypoints(_ waypoint: String) -> String {
            #"{"_type": "cmd", "action": "setWaypoints", "waypoints": {"_type": "waypoints", "waypoints": [\#(waypoint)]}}"#
        }
        let huge = #"{"_type": "cmd", "action": "dump", "padding": ""# + String(repeating: "x", count: 1_048_576) + #""}"#
        // Each bad command and the words its reason must hold.
        let bad: [(payload: String, reason: String)] = [
            ("{not json", "not an OwnTracks message"),
            (#"{"_type": "cmd"}"#, ".action is missing"),
            (#"{"_type": "location", "lat": 1, "lon": 2, "tst": 3}"#, "its _type is \"location\", not \"cmd\""),
            (#"{"_type": "cmd", "action": "selfDestruct"}"#, "unknown action \"selfDestruct\""),
            (huge, "more than the 262144 a command may have"),
            (setWaypoints(#"{"_type": "waypoint", "desc": "North of north", "lat": 95, "lon": 5, "rad": 100, "tst": 1700000002}"#), "latitude from -90 to 90"),
            (setWaypoints(#"{"_type": "waypoint", "desc": "Negative", "lat": 52, "lon": 5, "rad": -5, "tst": 1700000003}"#), "radius"),
            (setWaypoints(#"{"_type": "waypoint", "desc": "Huge", "lat": 52, "lon": 5, "rad": 5000000, "tst": 1700000004}"#), "radius"),
            (setWaypoints(#"{"_type": "waypoint", "desc": "Nowhere", "lat": "north", "lon": 5, "rad": 100, "tst": 1700000005}"#), "is not a number"),
            (#"{"_type": "cmd", "action": "setConfiguration", "configuration": {"_type": "configuration", "host": "evil.example", "port": 1883}}"#, "this one also sets host, port: the broker, credentials and keys are set on the device"),
            (#"{"_type": "cmd", "action": "setConfiguration", "configuration": {"_type": "configuration", "monitoring": 2, "password": "x"}}"#, "this one also sets password"),
            (#"{"_type": "cmd", "action": "setConfiguration", "configuration": {"_type": "configuration", "monitoring": 5}}"#, "monitoring must be -1 (quiet), 0 (manual), 1 (significant) or 2 (move), not 5.0"),
        ]
        for command in bad { try await DeliveryRuns.command(command.payload, broker) }
        // Another device's command never reaches this one.
        try await DeliveryRuns.command(#"{"_type": "cmd", "action": "clearWaypoints"}"#, broker, topic: "owntracks/me/other/cmd")
        // Then a good one, answered: the session survived them all.
        try await DeliveryRuns.command(#"{"_type": "cmd", "action": "waypoints"}"#, broker)
        try await eventually("the good command answered\n\(service.tail)") { !Self.received(subscriber, on: Self.device + "/waypoints").isEmpty }
        await service.expectCleanStop()

        let ignored = Self.notes(service).map(\.text).filter { $0.contains("command ignored: ") }
        #expect(ignored.count == bad.count + 1, "\(ignored.joined(separator: "\n"))")
        #expect(ignored.first?.contains("a retained message") == true)
        for (command, note) in zip(bad, ignored.dropFirst()) {
            #expect(note.contains(command.reason), "\(command.payload.prefix(80)): \(note)")
        }
        #expect(!Self.notes(service).contains { $0.text.hasSuffix("reportLocation received") || $0.text.hasSuffix("clearWaypoints received") })
        #expect(try String(contentsOfFile: file, encoding: .utf8) == original, "the waypoints file untouched")
        #expect(Self.regionIDs(Self.received(subscriber, on: Self.device + "/waypoints")[0]) == ["far"])
        #expect(Self.received(subscriber, on: Self.device + "/dump").isEmpty)
    }

    /// Seals `message` as OwnTracks does, with PyNaCl (an implementation independent of the
    /// service's): `{"_type": "encrypted", "data": BASE64(nonce + secretbox)}`.
    static func sealed(_ message: String, key: String) async throws -> String {
        let script = """
            import base64, json, sys
            from nacl.secret import SecretBox
            box = SecretBox(sys.argv[1].encode()[:32].ljust(32, b"\\0"))
            print(json.dumps({"_type": "encrypted", "data": base64.b64encode(bytes(box.encrypt(sys.argv[2].encode()))).decode()}))
            """
        let result = try await runCommand("/usr/bin/python3", ["-c", script, key, message])
        #expect(result.exitCode == 0, "\(result.error)")
        return result.lines.first ?? ""
    }

    @Test func withAKeyOnlyCommandsSealedWithItAreTakenAndTheAnswersAreSealed() async throws {
        try await DeliveryRuns.requirePyNaCl()
        let broker = try await MosquittoBroker()
        let subscriber = try await MosquittoSubscriber(broker)
        let secret = "the device's own shared secret"
        let key = "\(broker.directory)/owntracks.key"
        try secret.write(toFile: key, atomically: true, encoding: .utf8)
        chmod(key, 0o600)
        let service = try await DeliveryRuns.service(
            broker.directory, journal: "\(broker.directory)/journal.sqlite",
            deliver: [Self.destination(broker) + "&key-file=\(key)"], speed: "1", extra: ["--loop", "--strategy", "none", "--background"]
        )
        try await Self.waitForSession(subscriber, broker, key: secret, service)
        let dump = #"{"_type": "cmd", "action": "dump"}"#
        try await DeliveryRuns.command(dump, broker)
        try await DeliveryRuns.command(try await Self.sealed(dump, key: "another key altogether"), broker)
        try await DeliveryRuns.command(try await Self.sealed(dump, key: secret), broker)
        try await DeliveryRuns.command(try await Self.sealed(#"{"_type": "cmd", "action": "reportLocation"}"#, key: secret), broker)
        try await eventually("the dump and the location\n\(service.tail)") {
            !Self.received(subscriber, on: Self.device + "/dump").isEmpty && !subscriber.messages.filter { $0.topic == Self.device }.isEmpty
        }
        await service.expectCleanStop()
        let ignored = Self.notes(service).map(\.text).filter { $0.contains("command ignored") }
        #expect(ignored.count == 2)
        #expect(ignored.first?.contains("it is not encrypted, and the destination has a key-file") == true)
        #expect(ignored.last?.contains("does not decrypt with this key") == true)
        #expect(!subscriber.process.output.contains("\"configuration\""), "nothing in the clear")

        let lines = try await DeliveryRuns.decrypt(subscriber, key: secret, in: broker.directory)
        let configuration = lines.first { $0.hasPrefix(Self.device + "/dump ") }.map { DeliveryRuns.json(String($0.dropFirst(Self.device.count + 6))) }
        #expect(configuration?["_type"] as? String == "configuration")
        #expect(configuration?["encryption"] as? Bool == true)
        #expect(configuration?["pubTopicBase"] as? String == Self.device)
        #expect(lines.allSatisfy { !$0.contains(secret) && !$0.contains(key) }, "no secret in the dump")
        #expect(lines.contains { $0.hasPrefix(Self.device + " ") && $0.contains("\"_type\":\"location\"") })
    }

    @Test func theWillSaysWhenTheDeviceWentAwayAndAGoodbyeSendsNone() async throws {
        let broker = try await MosquittoBroker()
        let subscriber = try await MosquittoSubscriber(broker)
        let options = ["--loop", "--strategy", "none", "--background"]
        let journal = "\(broker.directory)/journal.sqlite"
        var service = try await DeliveryRuns.service(broker.directory, journal: journal, deliver: [Self.destination(broker)], speed: "1", extra: options)
        try await Self.waitForSession(subscriber, broker, service)
        #expect(try await Self.retainedStatus(broker)["state"] as? String == "online")
        await service.expectCleanStop()
        let stopped = Date().timeIntervalSince1970
        let goodbye = try await Self.retainedStatus(broker)
        #expect(goodbye["state"] as? String == "offline", "a subscriber that comes after a clean stop: \(goodbye)")
        #expect((goodbye["tst"] as? Double).map { $0 <= stopped && $0 >= stopped - 60 } == true, "the goodbye's time")

        let started = Date().timeIntervalSince1970.rounded(.down)
        service = try await DeliveryRuns.service(broker.directory, journal: journal, deliver: [Self.destination(broker)], speed: "1", extra: options)
        try await Self.waitForSession(subscriber, broker, count: 2, service)
        #expect(Self.states(subscriber) == ["online", "offline", "online"])
        #expect(
            subscriber.allMessages.filter { $0.strings["_type"] == "lwt" }.isEmpty,
            "a clean stop says goodbye: no will\n\(broker.log)"
        )
        service.signal(SIGKILL)
        await service.wait()
        try await eventually("the will") { subscriber.allMessages.contains { $0.strings["_type"] == "lwt" } }
        let will = subscriber.allMessages.filter { $0.strings["_type"] == "lwt" }
        #expect(will.count == 1 && will[0].topic == Self.device)
        #expect(will.first?.fields["tst"].map { $0 >= started && $0 <= Date().timeIntervalSince1970 } == true, "the tst of its connection")
        // The status is retained: a subscriber that comes after the kill is told it is away.
        try await eventually("the status offline after the kill") { Self.states(subscriber).last == "offline" }
        let away = try await Self.retainedStatus(broker)
        #expect(away["state"] as? String == "offline", "\(away)")
        #expect((away["tst"] as? Double).map { $0 >= started } == true, "the will's time: its session's start")
    }

    @Test func setConfigurationChangesTheMonitoringModeAndNothingElse() async throws {
        let broker = try await MosquittoBroker()
        let subscriber = try await MosquittoSubscriber(broker)
        let journal = "\(broker.directory)/journal.sqlite"
        let service = try await DeliveryRuns.service(
            broker.directory, journal: journal, deliver: [Self.destination(broker)], log: "bundg_zeus_9.log", logFolder: "tracks",
            speed: "4", extra: ["--loop", "--strategy", "monitoring", "--mode", "quiet"]
        )
        try await Self.waitForSession(subscriber, broker, service)
        let move = #"{"_type": "cmd", "action": "setConfiguration", "configuration": {"_type": "configuration", "monitoring": 2, "locatorDisplacement": "20", "locatorInterval": 3600}}"#
        try await DeliveryRuns.command(move, broker)
        try await eventually("locations in move mode\n\(service.tail)") { subscriber.messages.count >= 4 }
        try await DeliveryRuns.command(#"{"_type": "cmd", "action": "setConfiguration", "configuration": {"monitoring": -1}}"#, broker)
        try await DeliveryRuns.command(#"{"_type": "cmd", "action": "dump"}"#, broker)
        try await eventually("the dump") { !Self.received(subscriber, on: Self.device + "/dump").isEmpty }
        await service.expectCleanStop()

        let notes = Self.notes(service)
        #expect(notes.contains { $0.text.hasSuffix("reporting in move (20 m or 3600 s) mode") })
        // Asked before the change, told after it: the bounds of what move mode journaled.
        let moving = try #require(notes.first { $0.text.hasSuffix("setConfiguration received") }?.time)
        let quiet = try #require(notes.first { $0.text.hasSuffix("reporting in quiet mode") }?.time)
        let records = try allRecords(journal)
        #expect(records.allSatisfy { $0.recordedAt >= moving && $0.recordedAt <= quiet }, "quiet before and after: nothing journaled")
        #expect(records.count >= 4)
        for (earlier, later) in zip(records, records.dropFirst()) {
            #expect(later.location.distance(from: earlier.location) >= 20, "move mode: 20 m between journaled fixes")
        }
        let configuration = Self.received(subscriber, on: Self.device + "/dump")[0]
        #expect(configuration["monitoring"] as? Int == -1)
        #expect(configuration["locatorDisplacement"] as? Double == 20)
        #expect(configuration["host"] as? String == "127.0.0.1", "the broker as it was")
    }

    /// A boat at the harbour in manual mode, delivering to a Recorder over HTTP with `options`.
    static func harbourService(_ broker: MosquittoBroker, recorder: HTTPReceiver, options: String = "") async throws -> ChildProcess {
        let file = "\(broker.directory)/waypoints.json"
        try #"{"_type": "waypoints", "waypoints": [\#(harbour)]}"#.write(toFile: file, atomically: true, encoding: .utf8)
        return try await DeliveryRuns.service(
            broker.directory, journal: "\(broker.directory)/journal.sqlite",
            deliver: ["rec=owntracks+http://127.0.0.1:\(recorder.port)/pub?user=me&device=phone\(options)"],
            log: "bundg_zeus_9.log", logFolder: "tracks", speed: "1",
            extra: ["--loop", "--strategy", "monitoring", "--mode", "manual", "--waypoints", file]
        )
    }

    /// With a key the Recorder seals its whole answer, friends and commands, into one
    /// envelope (its `http.c`, `dopublish`): every answer is opened, the commands in it
    /// carried out, and nothing else is said about a friend's location.
    @Test func aRecordersSealedAnswerIsOpenedAndItsCommandsCarriedOut() async throws {
        try await DeliveryRuns.requirePyNaCl()
        let secret = "the Recorder's key for me-phone"
        let friend = #"{"_type": "location", "lat": 52.85, "lon": 5.31, "tst": 1610104395, "tid": "fr", "topic": "owntracks/you/car"}"#
        let commands = try await Self.sealed(
            #"[\#(friend), {"_type": "cmd", "action": "reportLocation"}, {"_type": "cmd", "action": "dump"}]"#, key: secret
        )
        let friendsOnly = try await Self.sealed("[\(friend)]", key: secret)
        let receiver = try HTTPReceiver { _, number in .json(200, number == 1 ? commands : friendsOnly) }
        let broker = try await MosquittoBroker()  // for its folder
        let key = "\(broker.directory)/owntracks.key"
        try secret.write(toFile: key, atomically: true, encoding: .utf8)
        chmod(key, 0o600)
        let service = try await Self.harbourService(broker, recorder: receiver, options: "&key-file=\(key)")
        let encryption = OwnTracksEncryption(secret: secret)
        let bodies = {
            receiver.accepted.compactMap { request -> [String: Any]? in
                (try? encryption.open(Data(request.body.utf8))).map { DeliveryRuns.json(String(decoding: $0, as: UTF8.self)) }
            }
        }
        try await eventually("the dump posted\n\(service.tail)") { bodies().contains { $0["_type"] as? String == "configuration" } }
        try await eventually("the location asked for") { bodies().filter { $0["_type"] as? String == "location" }.count >= 2 }
        await service.expectCleanStop()
        #expect(bodies().count == receiver.accepted.count, "every post sealed with the key")
        #expect(bodies().first { $0["_type"] as? String == "configuration" }?["encryption"] as? Bool == true)
        let notes = Self.notes(service).map(\.text)
        #expect(notes.contains { $0.contains("reportLocation answered") })
        #expect(!notes.contains { $0.contains("command ignored") }, "\(notes.filter { $0.contains("ignored") })")
        #expect(!service.output.contains("a command was ignored"), "a friend's location is not worth a warning")
    }

    @Test func aRecordersAnswerCarriesCommandsAndTheirAnswersArePosted() async throws {
        let answer = #"[{"_type": "cmd", "action": "reportLocation"}, {"_type": "card", "name": "A friend"}, "#
            + #"{"_type": "cmd", "action": "dump"}, {"_type": "cmd", "action": "fly"}]"#
        let receiver = try HTTPReceiver { _, number in number == 1 ? .json(200, answer) : .status(200) }
        let broker = try await MosquittoBroker()  // for its folder
        let service = try await Self.harbourService(broker, recorder: receiver)
        let bodies = { receiver.accepted.map { DeliveryRuns.json($0.body) } }
        try await eventually("the dump posted\n\(service.tail)") { bodies().contains { $0["_type"] as? String == "configuration" } }
        try await eventually("the location asked for") { bodies().filter { $0["_type"] as? String == "location" }.count >= 2 }
        await service.expectCleanStop()
        let types = bodies().compactMap { $0["_type"] as? String }
        // The harbour's entry (its fix, its transition) answered with the commands.
        #expect(Array(types.prefix(2)) == ["location", "transition"])
        #expect(types.filter { $0 == "location" }.count == 2, "the entry's fix and the one asked for: manual mode journals no other")
        let configuration = try #require(bodies().first { $0["_type"] as? String == "configuration" })
        #expect(configuration["mode"] as? Int == 3 && configuration["url"] as? String == "http://127.0.0.1:\(receiver.port)/pub")
        #expect(configuration["monitoring"] as? Int == 0)
        #expect(Self.regionIDs(configuration) == ["f7676c"])
        let notes = Self.notes(service).map(\.text)
        let ignored = notes.filter { $0.contains("command ignored") }
        #expect(ignored.count == 1 && ignored[0].contains("unknown action \"fly\""), "the card is not a command: passed over")
        #expect(notes.contains { $0.contains("reportLocation answered") })
    }
}
