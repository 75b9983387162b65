import Clocks
import Foundation
import KeepAliveCore
import KeepAliveJournal
import Testing

/// A system clock that is wrong, or jumps, against the journal: age goes by the receivers'
/// times and never takes what a destination waits for; fixes that arrived while the clock was
/// wrong are marked and carry the receiver's time; commands that read write nothing.
@Suite struct JournalClockTests {
    static let year = 365.0 * 86_400
    /// The receivers' times of these fixes: 1,700,000,000 + index.
    static let fixesStart = 1_700_000_000.0

    /// A journal whose system clock a test sets: `wall` seconds since 1970.
    final class Rig: Sendable {
        let folder = TemporaryFolder()
        let wall = Locked(JournalClockTests.fixesStart)
        let journal: FixJournal

        init(retention: JournalRetention = .unlimited, comparesClocks: Bool = true) throws {
            let wall = wall
            journal = try FixJournal(
                file: URL(fileURLWithPath: folder.file("j.sqlite")), retention: retention, comparesClocks: comparesClocks,
                now: { Date(timeIntervalSince1970: wall.withLock { $0 }) }, battery: { nil }
            )
        }

        var path: String { journal.file.path }
        var sequences: [Int64] { (try? journal.records(after: 0, limit: 10_000).map(\.sequence)) ?? [] }
    }

    /// The board: 30 fixes recorded for a destination that is down while the system
    /// clock said 2025, then the clock set right (and later a year too far, and back): age
    /// retention, at every append and open, takes none of them; once delivered, the ones more
    /// than the bound older than the newest fix (by the receiver's time) go.
    @Test func aClockSetLaterLosesNothingUndeliveredAndAgeGoesByTheReceiversTime() throws {
        let rig = try Rig(retention: JournalRetention(maximumAge: .seconds(3600), maximumCount: nil, maximumBytes: nil))
        rig.wall.withLock { $0 = 1_748_736_000 }  // 2025-06-01, the clock saved at the last shutdown
        try rig.journal.register(destination: "home", settings: "mqtt://127.0.0.1:9/owntracks/u/d")
        try rig.journal.append(contentsOf: (1...30).map { fix($0) })
        for wall in [1_795_000_000, 1_795_000_000 + Self.year, 1_795_000_000 - 3 * Self.year] {
            rig.wall.withLock { $0 = wall }
            try rig.journal.append(fix(30 + rig.sequences.count - 29, at: Date(timeIntervalSince1970: Self.fixesStart + 100)))
            #expect(try rig.journal.applyRetention() == 0)
            _ = try FixJournal(file: rig.journal.file, retention: rig.journal.retention)  // an open applies retention too
        }
        #expect(rig.sequences == Array(1...33), "nothing undelivered goes by age, whatever the clock says")

        // A fix two hours later by the receiver's time: 1...33 are older than the bound, but
        // only what was delivered (through #20) may go.
        try rig.journal.append(fix(34, at: Date(timeIntervalSince1970: Self.fixesStart + 7_300)))
        try rig.journal.markDelivered(try rig.journal.records(after: 0, limit: 20), to: "home")
        #expect(try rig.journal.applyRetention() == 20)
        #expect(rig.sequences == Array(21...34))
        let status = try rig.journal.status()
        #expect(status.dropped == 20 && status.droppedUndelivered == 0)
    }

    /// Fixes without a trusted time (none, or a GPS week rolled over to 2006) go with the fixes
    /// numbered after them; a journal without any trusted time drops nothing by age.
    @Test func fixesWithoutATrustedTimeAgeWithTheirNeighbours() throws {
        let rig = try Rig(retention: JournalRetention(maximumAge: .seconds(60), maximumCount: nil, maximumBytes: nil))
        var untimed = fix(2)
        untimed.timestamp = nil
        let rolledOver = fix(3, at: Date(timeIntervalSince1970: 1_150_000_000))
        try rig.journal.append(contentsOf: [rolledOver, untimed])
        #expect(try rig.journal.applyRetention() == 0, "no trusted time: nothing is known to be old")
        try rig.journal.append(contentsOf: [fix(1), untimed, rolledOver, fix(10)])
        try rig.journal.append(fix(200))
        #expect(try rig.journal.applyRetention() == 6, "up to #6 (#4's time is old; #5 and #6 came before #7)")
        #expect(rig.sequences == [7])
    }

    /// The system clock against the receiver's: within 10 s nothing changes; beyond, the record
    /// is marked and its `recordedAt` is in the receiver's time, read back the same; a replay
    /// (clocks not compared) has no offset at all.
    @Test func fixesThatArriveWhileTheClockIsWrongAreMarkedAndCarryTheReceiversTime() throws {
        let rig = try Rig()
        let fixTime = Date(timeIntervalSince1970: Self.fixesStart + 1)
        rig.wall.withLock { $0 = Self.fixesStart + 1.8 }
        let right = try rig.journal.append(fix(1))
        rig.wall.withLock { $0 = Self.fixesStart + 1 - Self.year }
        let behind = try rig.journal.append(fix(1))
        rig.wall.withLock { $0 = Self.fixesStart + 1 + 40 }
        let ahead = try rig.journal.append(fix(1))

        #expect(right.systemClockOffset == SystemClockOffset(seconds: 0.8) && !right.isMarkedForClock)
        #expect(right.recordedAt == Date(timeIntervalSince1970: Self.fixesStart + 1.8), "the system's time, which was right")
        #expect(behind.systemClockOffset?.seconds == -Self.year && behind.isMarkedForClock)
        #expect(ahead.systemClockOffset?.seconds == 40 && ahead.isMarkedForClock)
        for record in [behind, ahead] { #expect(record.recordedAt == fixTime, "the receiver's time, not the wrong one") }
        #expect(try rig.journal.records(after: 0) == [right, behind, ahead], "read back as appended")
        #expect(try rig.journal.status().systemClockOffset?.seconds == 40)
        #expect(SystemClockOffset(seconds: -Self.year - 86_400).words == "1 year 1 day behind")

        let replay = try Rig(comparesClocks: false)
        replay.wall.withLock { $0 = 1_795_000_000 }
        let replayed = try replay.journal.append(fix(1))
        #expect(replayed.systemClockOffset == nil && replayed.recordedAt == Date(timeIntervalSince1970: 1_795_000_000))
        #expect(try replay.journal.status().systemClockOffset == nil)
    }

    /// A writer says once that the clock went wrong and once that it is right again, with the
    /// offset, whatever the number of fixes between.
    @Test func theWriterSaysWhenTheClockGoesWrongAndWhenItIsRightAgain() async throws {
        let rig = try Rig()
        let reports = Locked([JournalWriter.Report]())
        let writer = JournalWriter(journal: rig.journal, durability: .full, clock: TestClock<Duration>()) { report in
            reports.withLock { $0.append(report) }
        }
        for (index, wall) in [0.5, 0.4, -Self.year, -Self.year, 0.3, 0.6].enumerated() {
            rig.wall.withLock { $0 = Self.fixesStart + Double(index) + wall }
            writer.record(fix(index))
            await rig.journal.perform { _ in () }  // its commit done: one a fix
        }
        let said = reports.read { $0.compactMap { if case .systemClock(let offset) = $0 { offset.seconds } else { nil } } }
        #expect(said == [-Self.year, 0.3])
        let stored = reports.read { $0.compactMap { if case .stored(let commit) = $0 { commit.systemClockOffset?.seconds } else { nil } } }
        #expect(stored == [0.5, 0.4, -Self.year, -Self.year, 0.3, 0.6])
    }

    /// `journal status`, `export` and `dead-letters` open the journal to read: the file's bytes
    /// and its write-ahead log are the same after, retention due or not, and a journal of an
    /// earlier layout is read as it is, not upgraded.
    @Test func aJournalOpenedToReadIsNeverWritten() throws {
        let rig = try Rig(retention: JournalRetention(maximumAge: .seconds(10), maximumCount: 5, maximumBytes: nil))
        try rig.journal.register(destination: "home", settings: "mqtt://127.0.0.1:9/owntracks/u/d")
        try rig.journal.append(contentsOf: (1...5).map { fix($0) })
        try rig.journal.append(fix(6, at: Date(timeIntervalSince1970: Self.fixesStart + 1000)))
        let before = try files(rig.path)
        let reader = try FixJournal(file: rig.journal.file, access: .readOnly, retention: rig.journal.retention)
        #expect(try reader.applyRetention() == 0)
        #expect(try reader.status().records == 6)
        #expect(try reader.records(after: 0).count == 6)
        #expect(try reader.deadLetters(for: "home").isEmpty)
        #expect(throws: JournalError.self) { try reader.append(fix(7)) }
        #expect(try files(rig.path) == before)

        let missing = rig.folder.file("none.sqlite")
        #expect(throws: JournalError.self) { _ = try FixJournal(file: URL(fileURLWithPath: missing), access: .readOnly) }
        #expect(!FileManager.default.fileExists(atPath: missing), "a reader creates nothing")
    }

    @Test func aJournalOfAnEarlierLayoutIsReadAsItIs() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("v1.sqlite")
        try await sqlite3(path, "PRAGMA journal_mode = WAL;\n" + journalLayoutV1 + """
            INSERT INTO fix (uid, fixTime, recordedAt, latitude, longitude, mode) VALUES
                ('9b2f4c1e-0d7a-4e3b-8c55-1f0e2d3c4b5a', 1700000001, 1700000002, 52, 4, 3);
            INSERT INTO destination (name, settings, leaseOwner, leaseExpires) VALUES
                ('home', 'mqtt://127.0.0.1:9/owntracks/u/d', '1234@pine/3f2a9c1e service', 4000000000);
            """)
        let before = try files(path)
        let reader = try FixJournal(file: URL(fileURLWithPath: path), access: .readOnly)
        let records = try reader.records(after: 0)
        #expect(records.map(\.id) == ["9b2f4c1e-0d7a-4e3b-8c55-1f0e2d3c4b5a"])
        #expect(records.first?.event == nil && records.first?.systemClockOffset == nil)
        let status = try reader.status()
        #expect(status.records == 1)
        #expect(status.destinations.map(\.deliveredBy) == ["1234@pine/3f2a9c1e service"])
        #expect(status.destinations.map(\.deliveredSince) == [nil], "taken before its time was kept")
        #expect(try files(path) == before, "not upgraded: reading writes nothing")
    }

    /// A lease taken before the clock went back a year is over, not held for a year.
    @Test func aLeaseFromBeforeTheClockWentBackIsOver() throws {
        let rig = try Rig()
        try rig.journal.register(destination: "home", settings: "mqtt://127.0.0.1:9/owntracks/u/d")
        #expect(try rig.journal.acquireLease(for: "home", owner: "service", ttl: .seconds(15)))
        #expect(try !rig.journal.acquireLease(for: "home", owner: "upload", ttl: .seconds(15)))
        rig.wall.withLock { $0 -= Self.year }
        #expect(try rig.journal.acquireLease(for: "home", owner: "upload", ttl: .seconds(15)))
    }

    /// The database file and its write-ahead log, byte for byte (the `-shm` index is shared
    /// memory that every reader maps, not data).
    private func files(_ path: String) throws -> [Data] {
        try [path, path + "-wal"].map { FileManager.default.fileExists(atPath: $0) ? try Data(contentsOf: URL(fileURLWithPath: $0)) : Data() }
    }
}
