import Foundation
import LocationKeepAlive
import LocationKeepAliveMocks
import IntegrationSupport
import Testing

/// OwnTracks over MQTT against a real mosquitto, checked by mosquitto_sub.
@Suite struct MQTTDeliveryTests {


    @Test func theServiceDeliversEveryReplayedFixInOrderWithOwnTracksUnits() async throws {
        let broker = try await MosquittoBroker()
        let subscriber = try await MosquittoSubscriber(broker)
        let journal = "\(broker.directory)/journal.sqlite"
        let service = try await DeliveryRuns.service(
            broker.directory, journal: journal, deliver: ["home=mqtt://127.0.0.1:\(broker.port)/owntracks/me/phone?tid=ph"]
        )
        try await eventually(
            "72 fixes journaled and delivered",
            context: {
                let status = try? FixJournal(file: URL(fileURLWithPath: journal), access: .readOnly).status()
                return "journal: \(status.map { "\($0.records) records, \($0.destinations)" } ?? "unreadable")\n"
                    + "at the subscriber: \(subscriber.messages.count)\nthe service said:\n\(service.tail)"
            }
        ) {
            (try? allRecords(journal).count) == 72 && (try? DeliveryRuns.depth(journal)) == 0
        }
        await service.expectCleanStop()
        try await eventually("mosquitto_sub to see 72 messages") { subscriber.messages.count >= 72 }
        let records = try allRecords(journal)
        let messages = subscriber.messages
        #expect(messages.count == 72)
        #expect(Set(messages.map(\.topic)) == ["owntracks/me/phone"])
        for (record, message) in zip(records, messages) {
            let fix = record.location
            #expect(message.strings["_type"] == "location" && message.strings["tid"] == "ph")
            #expect(message.fields["tst"] == fix.timestamp!.timeIntervalSince1970.rounded(.down))
            #expect(abs(message.fields["lat"]! - fix.latitude) < 1e-7 && abs(message.fields["lon"]! - fix.longitude) < 1e-7)
            #expect(message.fields["vel"] == fix.speed.map { ($0 * 3.6).rounded() })
            #expect(message.fields["acc"] == fix.horizontalAccuracy.map { $0.rounded() })
            #expect(message.fields["alt"] == fix.altitudeMSL.map { $0.rounded() })
            #expect(message.fields["created_at"] == record.recordedAt.timeIntervalSince1970.rounded(.down))
            #expect(message.strings["_id"] == record.shortID)
        }
        #expect(service.output.contains(#""event":"delivery""#))
    }

    /// The default tracker is live: in the default durability (grouped) each fix reaches the
    /// broker while its group is still in memory (here the commit interval is an hour, so no
    /// commit can come first), and a stop commits the group, delivers what waits and says so:
    /// every fix journaled is at the subscriber, with the `_id` it is journaled with, once.
    @Test func theDefaultTrackerDeliversEachFixBeforeItsCommitAndAStopDeliversTheLast() async throws {
        let broker = try await MosquittoBroker()
        let subscriber = try await MosquittoSubscriber(broker)
        let journal = "\(broker.directory)/journal.sqlite"
        let service = try await DeliveryRuns.service(
            broker.directory, journal: journal, deliver: ["home=mqtt://127.0.0.1:\(broker.port)/owntracks/me/phone"], speed: "4",
            batching: ["--commit-interval", "1h"]
        )
        try await eventually("5 fixes at the subscriber", context: { service.tail }) { subscriber.messages.count >= 5 }
        #expect(try FixJournal(file: URL(fileURLWithPath: journal), access: .readOnly).status().records == 0, "none committed yet")
        #expect(service.output.contains(#""journaled":false"#))
        await service.expectCleanStop()
        let records = try allRecords(journal)
        let output = service.output
        let fixes = output.split(separator: "\n").filter { $0.contains(#""class":"fix""#) }.count
        #expect(records.count == fixes && fixes >= 5, "the stop journaled every fix told: \(records.count) of \(fixes)")
        #expect(output.contains(#""stopping":true"#) && output.contains(#""undelivered":0"#), "\(service.tail)")
        let ids = subscriber.messages.compactMap { $0.strings["_id"] }
        #expect(Set(ids).count == ids.count, "none twice")
        #expect(ids == records.map(\.shortID), "every journaled fix at the subscriber, in order, with its id")
        #expect(try DeliveryRuns.depth(journal) == 0)
    }

    @Test func aBrokerWithPasswordsTakesTheOneFromA0600FileAndRefusesOthers() async throws {
        let broker = try await MosquittoBroker(security: .password(user: "tracker", password: "s3cret pass"))
        let subscriber = try await MosquittoSubscriber(broker, extra: ["-u", "tracker", "-P", "s3cret pass"])
        let journal = "\(broker.directory)/journal.sqlite"
        try FixJournal(file: URL(fileURLWithPath: journal)).append(contentsOf: (0..<30).map { index in
            Location(latitude: 52 + Double(index) * 1e-4, longitude: 4, timestamp: Date(timeIntervalSince1970: 1_700_000_000 + Double(index)), mode: .twoDimensional)
        })
        let passwordFile = "\(broker.directory)/password"
        try "s3cret pass\n".write(toFile: passwordFile, atomically: true, encoding: .utf8)
        let url = "mqtt://tracker@127.0.0.1:\(broker.port)/owntracks/me/phone?password-file=\(passwordFile)"

        chmod(passwordFile, 0o644)
        let open = try await runCommand(
            try Tools.keepalive.path, ["upload", "--journal", journal, "--deliver", "home=\(url)", "--drain"]
        )
        #expect(open.exitCode == 64 && open.error.contains("readable by others (mode 644): chmod 600 \(passwordFile)"))
        #expect(!(open.lines.joined() + open.error).contains("s3cret"))

        let wrong = "\(broker.directory)/wrong"
        try "guess\n".write(toFile: wrong, atomically: true, encoding: .utf8)
        chmod(wrong, 0o600)
        // It retries a refusal: stopped (SIGINT) once it has said so.
        let saidRefused = Interrupt()
        let refused = try await runCommand(
            try Tools.keepalive.path,
            ["upload", "--journal", journal, "--deliver", "home=\(url.replacingOccurrences(of: passwordFile, with: wrong))", "--drain"],
            interrupt: saidRefused,
            onLine: { if $0.contains("not authorised") { saidRefused.fire() } }
        )
        #expect(refused.lines.joined().contains("not authorised"), "\(refused.lines)")
        #expect(try DeliveryRuns.depth(journal) == 30)

        chmod(passwordFile, 0o600)
        let result = try await runCommand(
            try Tools.keepalive.path, ["upload", "--journal", journal, "--deliver", "home=\(url)", "--drain"], timeout: .seconds(30)
        )
        #expect(result.exitCode == 0, "\(result.lines) \(result.error)")
        try await eventually("30 messages") { subscriber.messages.count >= 30 }
        #expect(subscriber.messages.count == 30)
        let status = try FixJournal(file: URL(fileURLWithPath: journal)).status()
        #expect(status.destinations[0].depth == 0 && !status.destinations[0].settings.contains("s3cret"))
    }

    @Test func tlsWithTheTestsOwnCertificateAuthority() async throws {
        let broker = try await MosquittoBroker(security: .tls)
        let subscriber = try await MosquittoSubscriber(broker, extra: ["--cafile", broker.caFile])
        let journal = "\(broker.directory)/journal.sqlite"
        try FixJournal(file: URL(fileURLWithPath: journal)).append(contentsOf: (0..<10).map { index in
            Location(latitude: 52, longitude: 4 + Double(index) * 1e-4, timestamp: Date(timeIntervalSince1970: 1_700_000_000 + Double(index)), mode: .twoDimensional)
        })
        let noCA = try await runCommand(
            try Tools.keepalive.path,
            ["upload", "--journal", journal, "--deliver", "secure=mqtts://127.0.0.1:\(broker.port)/owntracks/me/phone", "--drain"],
            timeout: .seconds(6)
        )
        #expect(try DeliveryRuns.depth(journal) == 10, "a broker whose certificate no system CA signed must not get fixes: \(noCA.lines)")
        let result = try await runCommand(
            try Tools.keepalive.path,
            ["upload", "--journal", journal, "--deliver",
             "secure=mqtts://127.0.0.1:\(broker.port)/owntracks/me/phone?ca=\(broker.caFile)", "--drain"],
            timeout: .seconds(30)
        )
        #expect(result.exitCode == 0, "\(result.lines) \(result.error)")
        try await eventually("10 messages over TLS") { subscriber.messages.count >= 10 }
        #expect(subscriber.messages.count == 10)
    }

    /// The broker stopped and restarted 20 times while the service journals and delivers a
    /// looping replay: every journaled fix reaches the subscriber.
    ///
    /// SIGTERM, not SIGKILL: mosquitto saves its queues on a timer, never per message, so a
    /// broker killed outright can lose messages it had already acknowledged (no client can
    /// prevent that). A client killed outright is `JournalFaultTests`' 50 SIGKILLs.
    @Test func theBrokerStoppedAndRestarted20TimesLosesNothing() async throws {
        let broker = try await MosquittoBroker()
        let subscriber = try await MosquittoSubscriber(broker)
        let journal = "\(broker.directory)/journal.sqlite"
        let service = try await DeliveryRuns.service(
            broker.directory, journal: journal, deliver: ["home=mqtt://127.0.0.1:\(broker.port)/owntracks/me/phone"],
            speed: "20", extra: ["--loop"]
        )
        for _ in 0..<20 {
            try await Task.sleep(for: .milliseconds(Int64.random(in: 300...900)))  // pacing: the broker up a while
            await broker.stop()
            try await Task.sleep(for: .milliseconds(Int64.random(in: 100...400)))  // pacing: and down a while
            try await broker.start()
        }
        await service.expectCleanStop()
        let produced = service.output.split(separator: "\n").filter { $0.contains(#""class":"fix""#) }.count
        let drain = try await runCommand(try Tools.keepalive.path, ["upload", "--journal", journal, "--drain"], timeout: .seconds(60))
        #expect(drain.exitCode == 0)
        let records = try allRecords(journal)
        try? await eventually("every journaled fix at the subscriber", timeout: .seconds(20)) {
            Set(subscriber.messages.map(\.key)).count >= records.count
        }
        let counts = DeliveryCounts(produced: produced, journal: records, received: subscriber.messages.map(\.key))
        print("broker stopped 20 times: \(counts)")
        #expect(counts.lost == 0 && counts.journaled == counts.produced && counts.journaled > 200, "\(counts)")
    }
}
