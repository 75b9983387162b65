import Foundation
import LocationKeepAlive
import LocationKeepAliveMocks
import Testing

/// The journal under faults: the service killed mid-write, a full disk, damaged files, and
/// the service frozen while `keepalive upload` takes its destination over.
@Suite struct JournalFaultTests {
    static func destination(_ broker: MosquittoBroker) -> String { "home=mqtt://127.0.0.1:\(broker.port)/owntracks/me/phone" }

    static func producedFixes(_ output: String) -> [String] {
        output.split(separator: "\n").filter { $0.contains(#""class":"fix""#) }.compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
            return "\(object["time"] ?? "")|\(object["latitude"] ?? "")"
        }
    }

    static func integrity(_ path: String) async throws -> String {
        try await run("/usr/bin/sqlite3", [path, "PRAGMA integrity_check;"])
    }

    /// SIGKILL 50 times while journaling and delivering: every fix the service reported is in
    /// the journal, the journal is intact, and every journaled fix reaches the subscriber.
    @Test func theServiceKilled50TimesLosesNothing() async throws {
        let broker = try await MosquittoBroker()
        let subscriber = try await MosquittoSubscriber(broker)
        let journal = "\(broker.directory)/journal.sqlite"
        var produced: [String] = []
        for _ in 0..<50 {
            let service = try await MQTTDeliveryTests.service(
                broker.directory, journal: journal, deliver: [Self.destination(broker)], speed: "40", extra: ["--loop"]
            )
            // Killed at a random moment of its work: after its first fix (a service ten times
            // slower under ThreadSanitizer had not opened its journal 600 ms after its start).
            try await eventually("the service's first fix", context: { service.tail }) {
                !Self.producedFixes(service.output).isEmpty
            }
            try await Task.sleep(for: .milliseconds(Int64.random(in: 0...450)))
            service.signal(SIGKILL)
            await service.wait()
            produced += Self.producedFixes(service.output)
        }
        #expect(try await Self.integrity(journal) == "ok")
        let records = try allRecords(journal)
        var journaled: [String: Int] = [:]
        for record in records {
            let time = record.location.timestamp.map { $0.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)) } ?? ""
            journaled["\(time)|\(record.location.latitude)", default: 0] += 1
        }
        var reported: [String: Int] = [:]
        for key in produced { reported[key, default: 0] += 1 }
        let missing = reported.filter { journaled[$0.key, default: 0] < $0.value }
        #expect(missing.isEmpty, "reported but not journaled: \(missing.prefix(5))")
        let drain = try await runCommand(try Tools.keepalive.path, ["upload", "--journal", journal, "--drain"], timeout: .seconds(60))
        #expect(drain.exitCode == 0)
        try await eventually("every journaled fix at the subscriber") {
            Set(subscriber.messages.map(\.key)).count >= records.count
        }
        let counts = DeliveryCounts(produced: produced.count, journal: records, received: subscriber.messages.map(\.key))
        print("service killed 50 times: \(counts)")
        #expect(counts.lost == 0 && counts.produced >= 50, "\(counts)")
    }

    /// The journal on a 512 KB tmpfs: once it is full the service says so clearly, keeps
    /// running and delivering, and loses nothing it had stored.
    @Test func aFullDiskIsReportedAndWhatWasStoredIsStillDelivered() async throws {
        let broker = try await MosquittoBroker()
        let subscriber = try await MosquittoSubscriber(broker)
        let mount = "\(broker.directory)/small"
        try FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: true)
        let mounted = try await runCommand("/bin/mount", ["-t", "tmpfs", "-o", "size=512k", "tmpfs", mount])
        guard mounted.exitCode == 0 else {
            throw ToolMissing("mounting a small tmpfs needs root (CI runs as root): \(mounted.error)")
        }
        defer { _ = try? Process.run(URL(fileURLWithPath: "/bin/umount"), arguments: ["-l", mount]).waitUntilExit() }
        let journal = "\(mount)/journal.sqlite"
        let service = try await MQTTDeliveryTests.service(
            broker.directory, journal: journal, deliver: [Self.destination(broker)], speed: "0", extra: ["--loop"]
        )
        try await eventually("the disk-full error", timeout: .seconds(60)) {
            service.output.contains("the disk under journal \(journal) is full")
        }
        #expect(service.isRunning)
        // The delivery cursor may not be writable either: what counts is what the subscriber got.
        let records = try allRecords(journal)
        try await eventually("every stored fix at the subscriber", timeout: .seconds(60), context: { service.tail }) {
            Set(subscriber.messages.map(\.key)).count >= records.count
        }
        await service.expectCleanStop()
        #expect(try await Self.integrity(journal) == "ok")
        let counts = DeliveryCounts(
            produced: Self.producedFixes(service.output).count, journal: records, received: subscriber.messages.map(\.key)
        )
        // Every fix not stored was reported, one error each: nothing is dropped silently.
        let refused = service.output.split(separator: "\n").filter { $0.contains("is full: the fix was not stored") }.count
        print("disk full: \(counts), \(refused) fixes refused with an error")
        #expect(counts.lost == 0 && counts.journaled > 10 && refused > 0, "\(counts)")
        // (The stop may fall between a fix's error and its own line: at most one more.)
        #expect(counts.journaled + refused - counts.produced <= 1 && counts.journaled + refused >= counts.produced)
    }

    @Test func aDamagedOrNewerJournalIsNamedAndNeverOverwritten() async throws {
        let folder = NSTemporaryDirectory() + "damaged-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let damaged = "\(folder)/damaged.sqlite"
        let garbage = Data("SQLite format 3\0".utf8) + Data(repeating: 0xA5, count: 8192)
        try garbage.write(to: URL(fileURLWithPath: damaged))
        for arguments in [
            ["journal", "status", "--journal", damaged],
            ["export", "--journal", damaged],
            ["run", "--replay", NMEAFixture("ublox-8.log").url.path, "--journal", damaged, "--audio-device", "null"],
        ] {
            let result = try await runCommand(try Tools.keepalive.path, arguments, timeout: .seconds(20))
            #expect(result.exitCode == 1, "\(arguments)")
            #expect(result.error.contains("journal \(damaged) is damaged or not a journal"), "\(result.error)")
            #expect(result.error.contains("left untouched"))
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: damaged)) == garbage)

        let newer = "\(folder)/newer.sqlite"
        _ = try FixJournal(file: URL(fileURLWithPath: newer)).append(Location(latitude: 1, longitude: 2, mode: .twoDimensional))
        _ = try await run("/usr/bin/sqlite3", [newer, "PRAGMA wal_checkpoint(TRUNCATE); INSERT INTO grdb_migrations VALUES ('v2-from-the-future');"])
        let before = try Data(contentsOf: URL(fileURLWithPath: newer))
        let result = try await runCommand(try Tools.keepalive.path, ["journal", "status", "--journal", newer])
        #expect(result.exitCode == 1)
        #expect(result.error.contains("was written by a newer keepalive (schema v2-from-the-future)"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: newer)) == before)
    }

    /// The background transfer: the service is frozen with a backlog (its broker was down);
    /// `keepalive upload` takes the destination over once the service's lease lapses and
    /// delivers the backlog; thawed, the service does not send it again.
    @Test func theUploaderDeliversWhileTheServiceIsFrozen() async throws {
        let broker = try await MosquittoBroker()
        let subscriber = try await MosquittoSubscriber(broker)
        await broker.kill()
        let journal = "\(broker.directory)/journal.sqlite"
        let service = try await MQTTDeliveryTests.service(
            broker.directory, journal: journal, deliver: [Self.destination(broker)], speed: "0", extra: ["--lease", "2s"]
        )
        try await eventually("the backlog journaled", context: { service.tail }) { (try? allRecords(journal).count) == 72 }
        #expect(try FixJournal(file: URL(fileURLWithPath: journal)).status().destinations[0].deliveredBy?.hasSuffix(" service") == true)
        service.signal(SIGSTOP)  // what the host's signal freezer does
        try await broker.start()
        let upload = try ChildProcess(
            try Tools.keepalive.path, ["upload", "--journal", journal, "--lease", "2s", "--json"],
            output: "\(broker.directory)/upload.out"
        )
        try await eventually("the uploader to deliver the backlog", timeout: .seconds(30)) {
            (try? MQTTDeliveryTests.depth(journal)) == 0
        }
        #expect(upload.output.contains(#""delivering":true"#))
        service.signal(SIGCONT)
        try await Task.sleep(for: .seconds(3))
        #expect(try FixJournal(file: URL(fileURLWithPath: journal)).status().destinations[0].deliveredBy?.hasSuffix(" upload") == true)
        await service.expectCleanStop()
        await upload.expectCleanStop()
        let records = try allRecords(journal)
        try await eventually("72 at the subscriber") { Set(subscriber.messages.map(\.key)).count >= 72 }
        let counts = DeliveryCounts(produced: 72, journal: records, received: subscriber.messages.map(\.key))
        print("frozen service, uploader: \(counts)")
        #expect(counts.lost == 0 && counts.deliveredTwice == 0, "\(counts)")
    }
}
