import Foundation
import LocationKeepAlive
import LocationKeepAliveMocks
import IntegrationSupport
import Testing

/// The journal under faults: the service killed mid-write, a full disk, damaged files, and
/// the service frozen while `keepalive upload` takes its destination over.
@Suite struct JournalFaultTests {
    static func destination(_ broker: MosquittoBroker) -> String { "home=mqtt://127.0.0.1:\(broker.port)/owntracks/me/phone" }


    static func integrity(_ path: String) async throws -> String {
        try await run("/usr/bin/sqlite3", [path, "PRAGMA integrity_check;"])
    }

    /// SIGKILL 50 times (`KEEPALIVE_SERVICE_KILLS`: scripts/tsan's race hunt kills it 15 times)
    /// while journaling and delivering in `full` (a commit per fix, before it is told): every
    /// fix the service reported is in the journal, the journal is intact, and every journaled
    /// fix reaches the subscriber. (`grouped` under cuts: scripts/power-cuts.)
    @Test func theServiceKilled50TimesLosesNothing() async throws {
        let kills = ProcessInfo.processInfo.environment["KEEPALIVE_SERVICE_KILLS"].flatMap(Int.init) ?? 50
        let broker = try await MosquittoBroker()
        let subscriber = try await MosquittoSubscriber(broker)
        let journal = "\(broker.directory)/journal.sqlite"
        var produced: [String] = []
        for _ in 0..<kills {
            let service = try await DeliveryRuns.service(
                broker.directory, journal: journal, deliver: [Self.destination(broker)], speed: "40",
                extra: ["--loop", "--durability", "full"]
            )
            // Killed at a random moment of its work: after its first fix (a service ten times
            // slower under ThreadSanitizer had not opened its journal 600 ms after its start).
            try await eventually("the service's first fix", context: { service.tail }) {
                !DeliveryRuns.producedFixes(service.output).isEmpty
            }
            try await Task.sleep(for: .milliseconds(Int64.random(in: 0...450)))  // pacing: the kill's random moment
            service.signal(SIGKILL)
            await service.wait()
            produced += DeliveryRuns.producedFixes(service.output)
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
        print("service killed \(kills) times: \(counts)")
        #expect(counts.lost == 0 && counts.produced >= kills, "\(counts)")
    }

    /// The journal on a 512 KB tmpfs, which fills: the service says so naming the file and how
    /// many fixes it holds in memory, keeps tracking and delivering what was stored, and journals
    /// every held fix once there is room again (the tmpfs grown). Nothing is lost, nothing corrupt.
    @Test func aFullDiskHoldsFixesInMemoryUntilThereIsRoom() async throws {
        let broker = try await MosquittoBroker()
        let subscriber = try await MosquittoSubscriber(broker)
        let mount = "\(broker.directory)/small"
        try FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: true)
        let mounted = try await runCommand("/bin/mount", ["-t", "tmpfs", "-o", "size=512k", "tmpfs", mount])
        guard mounted.exitCode == 0 else {
            throw ToolMissing("mounting a small tmpfs needs root (CI runs as root): \(mounted.error)")
        }
        defer { runToEnd("/bin/umount", ["-l", mount]) }
        func held(_ output: String) -> Int? {
            output.split(separator: "\n").compactMap { line -> Int? in
                guard line.contains(#""held":"#), let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                else { return nil }
                return object["held"] as? Int
            }.last
        }
        let journal = "\(mount)/journal.sqlite"
        let service = try await DeliveryRuns.service(
            broker.directory, journal: journal, deliver: [Self.destination(broker)], speed: "20",
            extra: ["--loop", "--durability", "full"]
        )
        try await eventually("the disk-full report", timeout: .seconds(60), context: { service.tail }) {
            service.output.contains("the disk under journal \(journal) is full") && (held(service.output) ?? 0) > 5
        }
        #expect(service.isRunning)
        #expect(service.output.contains("fixes in memory, not lost: journaled once the journal can be written again"))
        let grown = try await runCommand("/bin/mount", ["-o", "remount,size=8m", mount])
        #expect(grown.exitCode == 0, "\(grown.error)")
        try await eventually("the held fixes journaled", timeout: .seconds(30), context: { service.tail }) {
            service.output.split(separator: "\n").last { $0.contains(#""event":"journal""#) }?.contains(#""stored""#) == true
        }
        await service.expectCleanStop()
        #expect(try await Self.integrity(journal) == "ok")
        let records = try allRecords(journal)
        let drain = try await runCommand(try Tools.keepalive.path, ["upload", "--journal", journal, "--drain"], timeout: .seconds(60))
        #expect(drain.exitCode == 0, "\(drain.error)")
        try await eventually("every stored fix at the subscriber", timeout: .seconds(60)) {
            Set(subscriber.messages.map(\.key)).count >= records.count
        }
        let counts = DeliveryCounts(
            produced: DeliveryRuns.producedFixes(service.output).count, journal: records, received: subscriber.messages.map(\.key)
        )
        print("disk full, then grown: \(counts)")
        #expect(counts.lost == 0 && counts.journaled > 10, "\(counts)")
        // Each fix is recorded before it is told: the stop may fall between the two.
        #expect(counts.journaled - counts.produced <= 1 && counts.journaled >= counts.produced, "every fix told is journaled: \(counts)")
    }

    /// The journal's ext4 filesystem turned read-only by an error (`errors=remount-ro`, what a
    /// failing SD card does): the service says so, naming the file and how many fixes it holds
    /// in memory (read-only, held, not lost), keeps tracking, says at its stop how many it could
    /// not journal, never "dropped"; the journal
    /// keeps every fix acknowledged before the error and passes the integrity check.
    @Test func aFilesystemTurnedReadOnlyIsSaidAndWhatWasStoredIsKept() async throws {
        let folder = NSTemporaryDirectory() + "readonly-\(UUID().uuidString.prefix(8))"
        let image = "\(folder)/disk.img", mount = "\(folder)/mnt"
        try FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        _ = FileManager.default.createFile(atPath: image, contents: nil)
        try FileHandle(forWritingTo: URL(fileURLWithPath: image)).truncate(atOffset: 16 << 20)
        _ = try await run("/sbin/mkfs.ext4", ["-q", image])
        let mounted = try await runCommand("/bin/mount", ["-o", "loop,errors=remount-ro", image, mount])
        guard mounted.exitCode == 0 else {
            throw ToolMissing("mounting an ext4 image needs root and loop devices (CI runs as root): \(mounted.error)")
        }
        var isMounted = true
        defer { if isMounted { runToEnd("/bin/umount", ["-l", mount]) } }
        let device = try await run("/bin/findmnt", ["-n", "-o", "SOURCE", mount]).trimmingCharacters(in: .whitespacesAndNewlines)
        let journal = "\(mount)/journal.sqlite"
        let service = try await DeliveryRuns.service(
            folder, journal: journal, deliver: [], speed: "20", extra: ["--loop", "--durability", "full"]
        )
        func reports(_ key: String) -> [Int] {
            service.output.split(separator: "\n").compactMap { line -> Int? in
                guard line.contains(#""event":"journal""#), let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                else { return nil }
                return object[key] as? Int
            }
        }
        try await eventually("ten fixes journaled", context: { service.tail }) { (reports("last").last ?? 0) >= 10 }
        // What was acknowledged before the error (the claim), read before it is raised: a commit
        // still on its way while ext4 aborts its journal is neither promised nor counted.
        let acknowledged = reports("last").max() ?? 0
        try "1".write(toFile: "/sys/fs/ext4/\((device as NSString).lastPathComponent)/trigger_fs_error", atomically: false, encoding: .utf8)
        try await eventually("the read-only report", timeout: .seconds(30), context: { service.tail }) {
            (reports("held").last ?? 0) > 5
        }
        // Said as read-only, not as SQLite's "disk I/O error", and as held, not lost.
        #expect(service.output.contains("the filesystem under journal \(journal) is read-only"), "\(service.tail)")
        #expect(service.output.contains("fixes in memory, not lost: journaled once the journal can be written again"))
        #expect(service.isRunning)
        await service.expectCleanStop()
        #expect(reports("notStored").last ?? 0 > 5, "the stop says how many it could not journal")
        #expect(reports("dropped").isEmpty, "nothing held is said dropped")
        _ = try await runCommand("/bin/umount", [mount])
        isMounted = false
        _ = try await runCommand("/sbin/e2fsck", ["-fy", image])
        let again = try await runCommand("/bin/mount", ["-o", "loop", image, mount])
        #expect(again.exitCode == 0, "\(again.error)")
        isMounted = again.exitCode == 0
        #expect(try await Self.integrity(journal) == "ok")
        let stored = try allRecords(journal).map { Int($0.sequence) }
        #expect(Set(1...acknowledged).isSubset(of: Set(stored)), "every acknowledged fix kept: \(acknowledged) acknowledged, \(stored.count) stored")
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
        let service = try await DeliveryRuns.service(
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
            (try? DeliveryRuns.depth(journal)) == 0
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
