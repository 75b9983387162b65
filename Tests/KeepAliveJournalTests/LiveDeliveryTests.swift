import Clocks
import Foundation
import KeepAliveCore
import KeepAliveDelivery
import KeepAliveJournal
import DeliveryMocks
import TestWaiting
import Testing

/// Delivery from the writer's memory, on a test clock: a fix goes before its group commits, the
/// commit stores it and where the destination stands in one transaction, a cut before that commit
/// costs at most a second sending of stored fixes (with their ids), and a drain sends what waits.
@Suite struct LiveDeliveryTests {
    final class Rig: Sendable {
        let clock = TestClock<Duration>()
        let folder = TemporaryFolder()
        let journal: FixJournal
        let writer: JournalWriter
        let events = Locked([DeliveryEvent]())

        init(_ durability: JournalDurability = .grouped) throws {
            journal = try FixJournal(file: URL(fileURLWithPath: folder.file("j.sqlite")), comparesClocks: false, battery: { nil })
            try journal.register(destination: "server", settings: "traccar+http://localhost/?id=1")
            writer = JournalWriter(journal: journal, durability: durability, commitInterval: .seconds(60), clock: clock)
        }

        func deliverer(_ transport: ScriptedDeliveryTransport, policy: DeliveryPolicy = DeliveryPolicy()) -> Deliverer {
            Deliverer(
                destination: "server", journal: journal, transport: transport, writer: writer, policy: policy, owner: "service",
                clock: clock
            ) { [events] event in events.withLock { $0.append(event) } }
        }

        var cursor: Int64 { (try? journal.status(of: "server").deliveredThrough) ?? -1 }
        var storedIDs: [String] { (try? journal.records(after: 0).map(\.id)) ?? [] }
    }

    /// A fix reaches the server with no commit and no time passing, with the id it is then
    /// stored with; the group's commit, a minute later, records it delivered in the same
    /// transaction, so nothing is sent twice and the cursor costs no commit of its own.
    @Test func aHeldFixIsSentBeforeItsCommitAndTheCommitRecordsItDelivered() async throws {
        let rig = try Rig()
        let transport = ScriptedDeliveryTransport()
        let delivery = Task { await rig.deliverer(transport).run() }
        let commits = Task { await rig.writer.run() }
        defer { delivery.cancel(); commits.cancel() }
        for index in 1...3 {
            rig.writer.record(fix(index))
            #expect(await transport.wait { $0.acknowledged.count == index }, "fix \(index) sent before any commit")
        }
        #expect(rig.storedIDs.isEmpty && rig.writer.heldCount == 3)
        let sent = transport.current.acknowledged
        #expect(sent.allSatisfy { !$0.isStored } && sent.map(\.location.latitude) == (1...3).map { fix($0).latitude })
        #expect(rig.events.read { $0 }.contains { if case .deliveredBeforeStored("server", 1) = $0 { true } else { false } })
        await rig.clock.advance(by: .seconds(60))
        try await waitUntil("the group committed") { rig.writer.heldCount == 0 && rig.storedIDs.count == 3 }
        #expect(rig.storedIDs == sent.map(\.id), "stored with the ids they were sent with (OwnTracks' _id)")
        #expect(rig.cursor == 3, "the commit recorded them delivered")
        try await Task.sleep(for: .milliseconds(50))
        #expect(transport.current.acknowledged.count == 3, "nothing sent twice")
    }

    /// An acknowledgement that comes after its records were committed (the group's interval ran
    /// out while they were in flight) finds their sequence numbers, and the next commit, one of
    /// cursors only when no fix comes, stores it: no fix is reported stored by it.
    @Test func anAcknowledgementAfterTheCommitIsStoredWithTheNextOne() async throws {
        let rig = try Rig()
        for index in 1...4 { rig.writer.record(fix(index)) }
        let inFlight = try await rig.writer.pending(for: "server", limit: 3).records
        #expect(inFlight.count == 3 && inFlight.allSatisfy { !$0.isStored })
        #expect(try await rig.writer.waiting(for: "server") == 4)
        rig.writer.acknowledge(inFlight.prefix(1), by: "server")
        #expect(try await rig.writer.waiting(for: "server") == 3, "one held record sent")
        await rig.writer.commit()
        #expect(rig.cursor == 1)
        rig.writer.acknowledge(inFlight, by: "server")
        #expect(try await rig.writer.waiting(for: "server") == 1, "the journal's queue less what was delivered since the commit")
        let next = try await rig.writer.pending(for: "server", limit: 10).records
        #expect(next.map(\.sequence) == [4], "read on from the memory's cursor: \(next.map(\.sequence))")
        await rig.writer.commit()
        #expect(rig.cursor == 3)
    }

    /// In full durability every fix is committed before it is sent; their acknowledgements ride
    /// on the next fix's commit. A cut (no further commit) leaves the cursor behind: the stored
    /// fixes are sent again after it, with the same ids, never lost.
    @Test func aCutBeforeTheCursorIsStoredSendsStoredFixesAgainWithTheirIDs() async throws {
        let rig = try Rig(.full)
        let transport = ScriptedDeliveryTransport()
        let delivery = Task { await rig.deliverer(transport).run() }
        for index in 1...3 {
            rig.writer.record(fix(index))
            #expect(await transport.wait { $0.acknowledged.count == index })
        }
        delivery.cancel()
        await delivery.value
        #expect(transport.current.acknowledged.map(\.sequence) == [1, 2, 3])
        #expect(rig.cursor == 2, "fix 3's acknowledgement waits for a commit that never came: \(rig.cursor)")
        let reopened = try FixJournal(file: rig.journal.file, comparesClocks: false)
        let again = try reopened.pending(for: "server", limit: 10)
        #expect(again.map(\.id) == [transport.current.acknowledged[2].id], "sent again, with its id")
    }

    /// A stop's drain: what is held goes at once, the drain returns once nothing is left, and
    /// with the server down it gives up at its bound, the fixes still journaled by the commit after.
    @Test func aDrainSendsWhatWaitsAndGivesUpAtItsBound() async throws {
        let rig = try Rig()
        let down = Locked(true)
        let transport = ScriptedDeliveryTransport { _, _ in down.read { $0 } ? .unavailable("broker down") : .acknowledge }
        let deliverer = rig.deliverer(transport)
        let delivery = Task { await deliverer.run() }
        defer { delivery.cancel() }
        for index in 1...5 { rig.writer.record(fix(index)) }
        let answer = Locked<Bool?>(nil)
        let drain = Task {
            let drained = await deliverer.drain(within: .seconds(3))
            answer.withLock { $0 = drained }
        }
        try await waitUntil("the first try failed") { !transport.current.batches.isEmpty }
        // The drain's own timer may start after any one step of the clock: steps until it answers.
        var moved = 0
        while answer.read({ $0 }) == nil, moved < 60 {
            await rig.clock.advance(by: .milliseconds(500))
            try await Task.sleep(for: .milliseconds(10))
            moved += 1
        }
        await drain.value
        #expect(answer.read { $0 } == false, "gave up")
        #expect(moved >= 6, "not before its 3 s bound on the deliverer's clock (\(moved) half-seconds)")
        await rig.writer.commit()
        #expect(try rig.journal.status(of: "server").depth == 5, "said undelivered, and journaled")
        down.withLock { $0 = false }
        transport.becomeReachable()
        #expect(await deliverer.drain(within: .seconds(30)))
        #expect(transport.current.acknowledged.map(\.sequence) == [1, 2, 3, 4, 5])
        await rig.writer.commit()
        #expect(rig.cursor == 5)
    }

    /// A held fix the server refuses is committed first, so its refusals count against the
    /// stored record and it can go to the dead letters; the queue moves on.
    @Test func aRefusedHeldFixGoesToTheDeadLettersOnceStored() async throws {
        let rig = try Rig()
        let refused = fix(2).latitude
        let transport = ScriptedDeliveryTransport { record, _ in record.location.latitude == refused ? .refuse("HTTP 400") : .acknowledge }
        let delivery = Task { await rig.deliverer(transport).run() }
        defer { delivery.cancel() }
        for index in 1...3 { rig.writer.record(fix(index)) }
        var moved = 0
        while moved < 20, transport.current.acknowledged.count < 2 {
            await rig.clock.advance(by: .seconds(1))
            try await Task.sleep(for: .milliseconds(20))  // pacing: the test clock's next second, after the deliverer's turn
            moved += 1
        }
        #expect(try rig.journal.deadLetters().map(\.sequence) == [2])
        #expect(transport.current.acknowledged.map(\.location.latitude) == [fix(1).latitude, fix(3).latitude])
    }

    /// The writer's commits renew the service's lease, so while fixes come its deliverer has
    /// no lease renewal of its own to write (at 1 Hz, one every 5 s cost 1.4 KB a fix).
    @Test func theWritersCommitsRenewTheServicesLease() throws {
        let rig = try Rig()
        let ttl = Duration.seconds(300)
        #expect(try rig.journal.acquireLease(for: "server", owner: "1@here service", ttl: ttl))
        rig.writer.renewLeases(of: "1@here service", for: ttl)
        Thread.sleep(forTimeInterval: 0.05)
        let before = try #require(try rig.journal.leaseRemaining(for: "server", owner: "1@here service"))
        rig.writer.record(fix(1))
        rig.writer.commit()
        let after = try #require(try rig.journal.leaseRemaining(for: "server", owner: "1@here service"))
        #expect(after > before, "renewed by the commit: \(before) then \(after)")
        #expect(try rig.journal.leaseRemaining(for: "server", owner: "2@here upload") == nil)
    }

    /// A lease whose owner, a process of this machine, is gone is taken at once; a live
    /// owner's, or another machine's, holds until it runs out.
    @Test func theLeaseOfAProcessThatIsGoneIsTakenAtOnce() throws {
        let rig = try Rig()
        let host = try String(contentsOfFile: "/proc/sys/kernel/hostname", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        // A process number no process has: the highest free one below the kernel's limit.
        let limit = Int32(try String(contentsOfFile: "/proc/sys/kernel/pid_max", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 32_768
        let gone = try #require((1..<limit).reversed().first { kill($0, 0) == -1 && errno == ESRCH })
        let ttl = Duration.seconds(300)
        #expect(try rig.journal.acquireLease(for: "server", owner: "\(gone)@\(host) service", ttl: ttl))
        #expect(try rig.journal.acquireLease(for: "server", owner: "\(getpid())@\(host) upload", ttl: ttl), "the dead service's lease is over")
        #expect(try !rig.journal.acquireLease(for: "server", owner: "\(gone)@\(host) service", ttl: ttl),
                "a live owner's lease holds")
        try rig.journal.releaseLease(for: "server", owner: "\(getpid())@\(host) upload")
        #expect(try rig.journal.acquireLease(for: "server", owner: "\(gone)@elsewhere service", ttl: ttl))
        #expect(try !rig.journal.acquireLease(for: "server", owner: "\(getpid())@\(host) upload", ttl: ttl), "another machine's holds")
        // After a reboot (a power cut): process 1 runs again, but the lease's boot is over.
        let owner = Deliverer.processOwner(role: "upload")
        let earlierBoot = "1@\(host)/00000000 service"
        try rig.journal.releaseLease(for: "server", owner: "\(gone)@elsewhere service")
        #expect(try rig.journal.acquireLease(for: "server", owner: earlierBoot, ttl: ttl))
        #expect(owner.contains("@\(host)/") && owner.hasSuffix(" upload"), "\(owner)")
        #expect(try rig.journal.acquireLease(for: "server", owner: owner, ttl: ttl), "a lease of an earlier boot is over")
    }

    private func waitUntil(_ what: String, _ condition: () throws -> Bool) async throws {
        try await TestWaiting.waitUntil(what, asking: condition)
    }
}
