import Foundation
import LocationKeepAlive
import LocationKeepAliveMocks
import IntegrationSupport
import Testing

/// An OwnTracks command for a service the host keeps frozen: the host watches the socket the
/// command comes by (`wake-on-data`), wakes the app for it as a push would, and the fresh fix
/// it asked for reaches the broker.
@Suite(.timeLimit(.minutes(4)), .serialized)
struct HostRemoteCommandTests {
    static func woken(_ event: AppHost.Event) -> Bool {
        if case .wokenForData("tracker") = event { return true }
        return false
    }

    @Test func reportLocationWakesTheFrozenServiceAndItsFreshFixIsPublished() async throws {
        let broker = try await MosquittoBroker()
        let subscriber = try await MosquittoSubscriber(broker)
        let harness = try await HostMonitoringTests.harness(freezer: .cgroup2)
        try harness.authorize("tracker", .always)
        let journal = harness.directory.appendingPathComponent("journal.sqlite").path
        let output = harness.directory.appendingPathComponent("tracker.ndjson").path
        try await harness.launch(
            "tracker",
            modes: ["location"],
            output: output,
            [
                try Tools.keepalive.path, "run", "--host", "--app", "tracker", "--auth-file", harness.authorizationFile(for: "tracker"),
                "--replay", NMEAFixture("ublox-8.log").url.path, "--speed", "1", "--loop", "--audio-device", "null", "--json",
                "--strategy", "monitoring", "--mode", "manual", "--journal", journal, "--batch-latency", "200ms",
                "--deliver", "home=mqtt://127.0.0.1:\(broker.port)/owntracks/me/phone?tid=ph",
            ]
        )
        let log = AppLog(path: output)
        try await eventually("the service's OwnTracks session (its status)") {
            subscriber.allMessages.contains { $0.topic == "owntracks/me/phone/status" }
        }
        let backgroundAt = ContinuousClock.now
        try await harness.move(.background, "tracker")
        let frozen = try #require(await harness.firstEvent(after: backgroundAt, within: .seconds(10)) { $0.frozenApp == "tracker" })
        #expect(subscriber.messages.isEmpty, "manual mode, no regions: nothing published unasked")

        for round in 1...2 {
            let asked = Date()
            try await DeliveryRuns.command(#"{"_type": "cmd", "action": "reportLocation"}"#, broker)
            try await eventually("the answer to reportLocation \(round)\n\(harness.eventLog(from: frozen.at))") {
                subscriber.messages.count >= round
            }
            let woken = harness.all.filter { $0.at >= frozen.at && Self.woken($0.event) }
            #expect(woken.count == round, "woken by the command's data, once for each")
            let records = try FixJournal(file: URL(fileURLWithPath: journal)).records(after: 0, limit: 100)
            #expect(records.count == round)
            #expect(records.last.map { $0.recordedAt >= asked } == true, "a fix taken after the command")
            // Frozen again after the event budget, before the next command.
            _ = try #require(
                await harness.firstEvent(after: woken.last!.at, within: .seconds(15)) { $0.frozenApp == "tracker" },
                "frozen again after the wake"
            )
        }
        // From the command read (once thawed) to the broker's acknowledgement, on the service's clock.
        let notes = log.events.filter { ($0["decision"] as? String)?.hasSuffix("reportLocation received") == true }
        let delivered = log.events.filter { $0["event"] as? String == "delivery" && $0["delivered"] != nil }
        #expect(notes.count == 2 && delivered.count >= 2)
        for note in notes {
            let read = try #require((note["time"] as? String).flatMap(DeliveryRuns.date))
            let acknowledged = delivered.compactMap { ($0["time"] as? String).flatMap(DeliveryRuns.date) }.first { $0 >= read }
            #expect(acknowledged.map { $0.timeIntervalSince(read) <= 2 } == true, "read at \(read), delivered \(String(describing: acknowledged))")
        }
        await harness.stop()
    }

    /// Before the host freezes a journaling service, it commits what it holds and delivers what
    /// waits within the notice's deadline, and says what it left: every fix journaled by then is
    /// at the subscriber or counted as left undelivered, none twice.
    @Test func aServiceAboutToBeFrozenDeliversWhatWaitsAndSaysWhatItLeft() async throws {
        let broker = try await MosquittoBroker()
        let subscriber = try await MosquittoSubscriber(broker)
        let harness = try await HostMonitoringTests.harness(freezer: .cgroup2) { $0.noticeTimeout = .seconds(2) }
        try harness.authorize("tracker", .whenInUse)
        let journal = harness.directory.appendingPathComponent("journal.sqlite").path
        let output = harness.directory.appendingPathComponent("tracker.ndjson").path
        try await harness.launch(
            "tracker",
            output: output,
            [
                try Tools.keepalive.path, "run", "--host", "--app", "tracker", "--auth-file", harness.authorizationFile(for: "tracker"),
                "--replay", NMEAFixture("ublox-8.log").url.path, "--speed", "4", "--loop", "--audio-device", "null", "--json",
                "--strategy", "none", "--journal", journal, "--commit-interval", "1h",
                "--deliver", "home=mqtt://127.0.0.1:\(broker.port)/owntracks/me/phone",
            ]
        )
        try await eventually("fixes at the subscriber") { subscriber.messages.count >= 3 }
        let backgroundAt = ContinuousClock.now
        try await harness.move(.background, "tracker")
        _ = try #require(await harness.firstEvent(after: backgroundAt, within: .seconds(15)) { $0.frozenApp == "tracker" })
        let pausing = try #require(AppLog(path: output).events.last { $0["pausing"] as? Bool == true }, "the pause said what it left")
        let left = try #require(pausing["undelivered"] as? Int)
        let records = try allRecords(journal)
        let ids = subscriber.messages.compactMap { $0.strings["_id"] }
        #expect(!records.isEmpty && Set(ids).count == ids.count)
        #expect(Set(records.map(\.shortID)).subtracting(ids).count == left, "at the subscriber, or counted as left: \(left)")
        #expect(left == 0, "a local broker takes them within the deadline")
        await harness.stop()
    }

    @Test func wakeOnDataTakesOnlyTheAppsOwnSocketsAndAFew() async throws {
        let harness = try await HostMonitoringTests.harness(freezer: .cgroup2)
        let path = harness.directory.appendingPathComponent("raw.answers").path
        try await harness.launch(
            "raw",
            rawProtocolApp(
                sending: [
                    #"{"op": "hello", "app": "$APP"}"#,
                    #"{"op": "wake-on-data", "sockets": [3, 4, 5, 6, 7]}"#,
                    #"{"op": "wake-on-data", "sockets": [1]}"#,
                    #"{"op": "wake-on-data", "sockets": [987]}"#,
                    #"{"op": "wake-on-data", "sockets": [-1]}"#,
                    #"{"op": "wake-on-data", "sockets": []}"#,
                ],
                answersTo: path
            )
        )
        let answers = try await IntegrationSupport.answers(in: path, count: 6).map { try JSONDecoder().decode(HostReply.self, from: Data($0.utf8)) }
        #expect(answers[0].ok)
        #expect(answers[1].error?.contains("at most 4 sockets, not 5") == true, "\(answers[1])")
        #expect(answers[2].error?.contains("descriptor 1 is not a socket") == true, "\(answers[2])")
        #expect(answers[3].error?.contains("cannot take descriptor 987") == true, "\(answers[3])")
        #expect(answers[4].error?.contains("not a descriptor") == true, "\(answers[4])")
        #expect(answers[5].ok, "none: nothing watched")
        await harness.stop()
    }
}
