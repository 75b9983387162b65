import Foundation
import LocationKeepAlive
import LocationKeepAliveMocks
import IntegrationSupport
import Testing

/// OwnTracks payloads encrypted with a shared key, read back by PyNaCl (Debian's python3-nacl,
/// an implementation of its own over libsodium): every location and transition, and nothing in
/// the clear on the broker; another key reads nothing.
@Suite struct OwnTracksEncryptionTests {
    @Test func aSubscriberWithTheKeyReadsEveryLocationAndTransitionAndAnotherKeyNothing() async throws {
        try await DeliveryRuns.requirePyNaCl()
        let broker = try await MosquittoBroker()
        let subscriber = try await MosquittoSubscriber(broker)
        let (journal, records) = try DeliveryRuns.journalWithRegionEvents()
        let key = "\(broker.directory)/owntracks.key"
        let secret = "correct horse battery staple, and then some more words"  // longer than 32 bytes: cut
        try "\(secret)\n".write(toFile: key, atomically: true, encoding: .utf8)
        chmod(key, 0o600)
        let destination = "home=mqtt://127.0.0.1:\(broker.port)/owntracks/me/phone?key-file=\(key)"
        let result = try await runCommand(
            try Tools.keepalive.path, ["upload", "--journal", journal, "--deliver", destination, "--drain"], timeout: .seconds(60)
        )
        #expect(result.exitCode == 0, "\(result.error)")
        try await eventually("8 messages at the subscriber") { subscriber.messages.filter { !$0.topic.hasSuffix("/probe") }.count >= 8 }
        #expect(!subscriber.process.output.contains("\"lat\""), "nothing in the clear")

        let lines = try await DeliveryRuns.decrypt(subscriber, key: secret, in: broker.directory)
        let messages = lines.map { line -> (topic: String, json: [String: Any]) in
            let parts = line.split(separator: " ", maxSplits: 1)
            let json = (try? JSONSerialization.jsonObject(with: Data(parts.last.map(String.init)?.utf8 ?? "".utf8))) as? [String: Any]
            return (String(parts[0]), json ?? ["error": line])
        }
        let summary = messages.map { "\($0.topic) \($0.json["_type"] ?? "?") \($0.json["event"] ?? "")" }
        #expect(summary == [
            "owntracks/me/phone location ", "owntracks/me/phone location ", "owntracks/me/phone location ",
            "owntracks/me/phone/event transition enter", "owntracks/me/phone location ", "owntracks/me/phone location ",
            "owntracks/me/phone/event transition leave", "owntracks/me/phone location ",
        ])
        let fixes = records.filter { $0.event == nil }
        let locations = messages.filter { $0.json["_type"] as? String == "location" }
        for (fix, message) in zip(fixes, locations) {
            #expect(message.json["_id"] as? String == fix.shortID)
            #expect(message.json["tst"] as? Int == Int(fix.location.timestamp!.timeIntervalSince1970))
        }

        let wrong = try await DeliveryRuns.decrypt(subscriber, key: "another key", in: broker.directory)
        #expect(wrong.count == 8 && wrong.allSatisfy { $0.contains(" ERROR ") }, "\(wrong)")
    }

    @Test func aKeyFileOthersCanReadOrAnEmptyOneIsRefusedAtStart() async throws {
        let folder = NSTemporaryDirectory() + "otkey-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (journal, _) = try DeliveryRuns.journal(1)
        let key = "\(folder)/key"
        try "s3cret\n".write(toFile: key, atomically: true, encoding: .utf8)
        chmod(key, 0o644)
        let open = try await runCommand(
            try Tools.keepalive.path, ["upload", "--journal", journal, "--deliver", "home=mqtt://127.0.0.1:1/owntracks/me/phone?key-file=\(key)"]
        )
        #expect(open.exitCode == 64 && open.error.contains("readable by others (mode 644): chmod 600 \(key)"), "\(open.error)")
        #expect(!open.error.contains("s3cret"))
        try "\n".write(toFile: key, atomically: true, encoding: .utf8)
        chmod(key, 0o600)
        let empty = try await runCommand(
            try Tools.keepalive.path, ["upload", "--journal", journal, "--deliver", "home=owntracks+http://127.0.0.1:1/pub?user=a&device=b&key-file=\(key)"]
        )
        #expect(empty.exitCode == 64 && empty.error.contains("is empty: write the shared encryption key into it"), "\(empty.error)")
        let traccar = try await runCommand(
            try Tools.keepalive.path, ["upload", "--journal", journal, "--deliver", "t=traccar+http://127.0.0.1:1/?id=1&key-file=\(key)"]
        )
        #expect(traccar.exitCode == 64 && traccar.error.contains("key-file is for OwnTracks"), "\(traccar.error)")
    }
}
