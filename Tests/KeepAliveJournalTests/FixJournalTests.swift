import Foundation
import KeepAliveJournal
import Testing

/// The journal on a real SQLite file: order, ids, permissions, reopening, retention, refusals.
@Suite struct FixJournalTests {
    @Test func appendsGetIncreasingSequencesUniqueIdsAndSurviveReopening() throws {
        let folder = TemporaryFolder()
        let path = folder.file("state/keepalive/journal.sqlite")
        do {
            let journal = try FixJournal(file: URL(fileURLWithPath: path), battery: { 77 })
            let first = try journal.append(fix(1))
            let rest = try journal.append(contentsOf: [fix(2), fix(3)])
            #expect([first.sequence] + rest.map(\.sequence) == [1, 2, 3])
            #expect(Set([first.id] + rest.map(\.id)).count == 3)
        }
        let reopened = try FixJournal(file: URL(fileURLWithPath: path))
        let records = try reopened.records(after: 0)
        #expect(records.map(\.sequence) == [1, 2, 3])
        #expect(records[1].location == fix(2))
        #expect(records[1].battery == 77)
        #expect(try reopened.records(after: 2).map(\.sequence) == [3])
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let folderMode = try FileManager.default.attributesOfItem(atPath: folder.file("state/keepalive"))[.posixPermissions] as? Int
        #expect(folderMode == 0o700)
    }

    /// A new journal is built beside its path and linked in whole (a first start on a slow card
    /// made it in two syncs, not thirteen): in WAL, its whole layout there, nothing left beside
    /// it; eight threads making one at once all open the same journal, and every fix each
    /// appends is in it.
    @Test func aNewJournalIsLinkedInWholeAndOneMadeByManyAtOnceIsOne() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("state/keepalive/journal.sqlite")
        let journals = try await withThrowingTaskGroup(of: FixJournal.self) { group in
            for _ in 0..<8 { group.addTask { try FixJournal(file: URL(fileURLWithPath: path)) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        for (index, journal) in journals.enumerated() { _ = try journal.append(fix(index + 1)) }
        let reopened = try FixJournal(file: URL(fileURLWithPath: path))
        #expect(try reopened.records(after: 0).count == 8)
        #expect(try reopened.connectionSettingsInEffect() == ["journal_mode": "wal", "synchronous": "2"])
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.file("state/keepalive"))
        #expect(left.allSatisfy { ["journal.sqlite", "journal.sqlite-wal", "journal.sqlite-shm"].contains($0) }, "\(left)")
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    /// The journal's errors say the same words through Foundation's `localizedDescription` as
    /// their `description` (a LocalizedError each), not "The operation could not be completed".
    @Test func errorsSayTheirWordsTheFoundationWayToo() {
        let error: any Error = JournalError.readOnlyFilesystem(path: "/mnt/j.sqlite")
        #expect(error.localizedDescription == "\(error)")
        #expect(error.localizedDescription.contains("the filesystem under journal /mnt/j.sqlite is read-only"))
    }

    @Test func aFileThatIsNotSQLiteIsRefusedByNameAndLeftUntouched() throws {
        let folder = TemporaryFolder()
        let path = folder.file("journal.sqlite")
        let garbage = Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 * 7919) })
        try garbage.write(to: URL(fileURLWithPath: path))
        #expect {
            try FixJournal(file: URL(fileURLWithPath: path))
        } throws: { error in
            guard case .damaged(let named, _) = error as? JournalError else { return false }
            return named == path && "\(error)".contains("left untouched")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == garbage)
    }

    @Test func aSQLiteFileThatIsNotAJournalIsRefused() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("other.sqlite")
        try await sqlite3(path, "CREATE TABLE notes(text); INSERT INTO notes VALUES ('mine');")
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(throws: JournalError.self) { try FixJournal(file: URL(fileURLWithPath: path)) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    @Test func aJournalFromANewerVersionIsRefusedAndLeftUntouched() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("journal.sqlite")
        _ = try FixJournal(file: URL(fileURLWithPath: path)).append(fix(1))
        try await sqlite3(path, "PRAGMA wal_checkpoint(TRUNCATE); INSERT INTO grdb_migrations VALUES ('v9-future');")
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect {
            try FixJournal(file: URL(fileURLWithPath: path))
        } throws: { error in
            (error as? JournalError) == .newerVersion(path: path, unknown: ["v9-future"])
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    @Test func retentionDropsTheOldestByCountAndCountsWhatWasNotDelivered() throws {
        let folder = TemporaryFolder()
        let journal = try FixJournal(
            file: URL(fileURLWithPath: folder.file("j.sqlite")),
            retention: JournalRetention(maximumAge: nil, maximumCount: 100, maximumBytes: nil)
        )
        try journal.register(destination: "server", settings: "traccar+http://localhost:5055/?id=1")
        try journal.append(contentsOf: (1...150).map { fix($0) })
        try journal.markDelivered(try journal.records(after: 0, limit: 30), to: "server")
        try journal.applyRetention()
        let status = try journal.status()
        #expect(status.records == 100)
        #expect(try journal.records(after: 0, limit: 1).first?.sequence == 51)
        #expect(status.dropped == 50 && status.droppedUndelivered == 20)  // 31...50 were never delivered
    }

    @Test func retentionByBytesKeepsTheFileUnderItsBound() throws {
        let folder = TemporaryFolder()
        let journal = try FixJournal(
            file: URL(fileURLWithPath: folder.file("j.sqlite")),
            retention: JournalRetention(maximumAge: nil, maximumCount: nil, maximumBytes: 256 * 1024)
        )
        for batch in 0..<20 { try journal.append(contentsOf: (0..<500).map { fix(batch * 500 + $0) }) }
        try journal.applyRetention()
        let status = try journal.status()
        #expect(status.bytes <= 256 * 1024)
        #expect(status.records > 0 && status.records < 10_000)
        #expect(status.dropped == Int64(10_000 - status.records))
        #expect(try journal.records(after: 0, limit: 1).first?.sequence == Int64(10_000 - status.records + 1))
    }

    @Test func changingADestinationsSettingsKeepsItsQueue() throws {
        let folder = TemporaryFolder()
        let journal = try FixJournal(file: URL(fileURLWithPath: folder.file("j.sqlite")))
        try journal.register(destination: "home", settings: "mqtt://old/owntracks/a/b")
        try journal.append(contentsOf: (1...10).map { fix($0) })
        try journal.markDelivered(try journal.pending(for: "home", limit: 4), to: "home")
        try journal.register(destination: "home", settings: "mqtts://new/owntracks/a/b")
        #expect(try journal.pending(for: "home", limit: 100).map(\.sequence) == Array(5...10))
        #expect(try journal.destinations().map(\.settings) == ["mqtts://new/owntracks/a/b"])
    }

    /// A destination registered again with its settings unchanged (every start of the service
    /// after the first) needs no write: it goes through while the journal refuses writes (a
    /// card that takes a second per sync would hold the first fixes for it), a change does not.
    @Test func registeringAnUnchangedDestinationWritesNothing() throws {
        let folder = TemporaryFolder()
        let journal = try FixJournal(file: URL(fileURLWithPath: folder.file("j.sqlite")))
        try journal.register(destination: "home", settings: "mqtt://broker/owntracks/a/b")
        try journal.refuseWrites(true)
        try journal.register(destination: "home", settings: "mqtt://broker/owntracks/a/b")
        #expect(throws: JournalError.self) { try journal.register(destination: "home", settings: "mqtt://other/owntracks/a/b") }
        #expect(throws: JournalError.self) { try journal.register(destination: "away", settings: "mqtt://broker/owntracks/a/b") }
        try journal.refuseWrites(false)
        try journal.register(destination: "home", settings: "mqtt://other/owntracks/a/b")
        #expect(try journal.destinations().map(\.settings) == ["mqtt://other/owntracks/a/b"])
    }

    @Test func aRefusedRecordBecomesADeadLetterAfterItsTriesAndCanBeRetried() throws {
        let folder = TemporaryFolder()
        let journal = try FixJournal(file: URL(fileURLWithPath: folder.file("j.sqlite")))
        try journal.register(destination: "t", settings: "traccar+http://x/?id=1")
        try journal.append(contentsOf: (1...5).map { fix($0) })
        let third = try journal.records(after: 2, limit: 1)[0]
        try journal.markDelivered(try journal.records(after: 0, limit: 2), to: "t")
        #expect(try !journal.recordRefusal(of: third, reason: "HTTP 400", by: "t", maximumTries: 2))
        #expect(try journal.pending(for: "t", limit: 10).first?.sequence == 3)
        #expect(try journal.recordRefusal(of: third, reason: "HTTP 400", by: "t", maximumTries: 2))
        #expect(try journal.pending(for: "t", limit: 10).map(\.sequence) == [4, 5])
        let letters = try journal.deadLetters(for: "t")
        #expect(letters.map(\.sequence) == [3] && letters[0].tries == 2 && letters[0].reason == "HTTP 400")
        #expect(try journal.status().destinations[0].deadLetters == 1)
        #expect(try journal.retryDeadLetters(for: "t") == 1)
        #expect(try journal.pending(for: "t", limit: 10).map(\.sequence) == [3, 4, 5])
        try journal.markDelivered(try journal.pending(for: "t", limit: 10), to: "t")
        #expect(try journal.deadLetters().isEmpty)
        #expect(throws: JournalError.unknownDestination("nope")) { try journal.retryDeadLetters(for: "nope") }
    }

    @Test func oneLeaseHolderAtATimeUntilItLapsesOrIsGivenUp() throws {
        let folder = TemporaryFolder()
        let time = ManualTime()
        let path = folder.file("j.sqlite")
        let service = try FixJournal(file: URL(fileURLWithPath: path), now: { time.now })
        let uploader = try FixJournal(file: URL(fileURLWithPath: path), now: { time.now })
        try service.register(destination: "d", settings: "mqtt://x/owntracks/a/b")
        #expect(try service.acquireLease(for: "d", owner: "service", ttl: .seconds(15)))
        #expect(try !uploader.acquireLease(for: "d", owner: "upload", ttl: .seconds(15)))
        time.advance(10)
        #expect(try service.acquireLease(for: "d", owner: "service", ttl: .seconds(15)))  // renewed
        time.advance(14)
        #expect(try !uploader.acquireLease(for: "d", owner: "upload", ttl: .seconds(15)))
        time.advance(2)  // the service was frozen and did not renew
        #expect(try uploader.acquireLease(for: "d", owner: "upload", ttl: .seconds(15)))
        #expect(try service.status().destinations[0].deliveredBy == "upload")
        time.advance(5)  // renewed: still the time it was taken
        #expect(try uploader.acquireLease(for: "d", owner: "upload", ttl: .seconds(15)))
        #expect(try service.status().destinations[0].deliveredSince == Date(timeIntervalSince1970: time.now.timeIntervalSince1970 - 5))
        try uploader.releaseLease(for: "d", owner: "upload")
        #expect(try service.acquireLease(for: "d", owner: "service", ttl: .seconds(15)))
    }

    @Test func forEachRecordReadsATimeWindowInPages() throws {
        let folder = TemporaryFolder()
        let journal = try FixJournal(file: URL(fileURLWithPath: folder.file("j.sqlite")))
        for page in 0..<3 { try journal.append(contentsOf: (0..<2000).map { fix(page * 2000 + $0) }) }
        var seen: [Int64] = []
        try journal.forEachRecord(
            from: Date(timeIntervalSince1970: 1_700_000_000 + 1999),
            to: Date(timeIntervalSince1970: 1_700_000_000 + 4001)
        ) { seen.append($0.sequence) }
        #expect(seen == Array(2000...4002))
    }
}
