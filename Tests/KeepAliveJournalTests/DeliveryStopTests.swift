import Foundation
import KeepAliveCore
import KeepAliveDelivery
import KeepAliveJournal
import DeliveryMocks
import Testing

/// A program's own loop with delivery beside it (`JournalDelivery.run(until:)`), stopping as
/// `keepalive run` does: what the loop journaled is delivered before the run returns, whether
/// the loop ended, was stopped, or failed; what could not be is named.
@Suite(.timeLimit(.minutes(2))) struct DeliveryStopTests {
    /// A journal with one destination, delivered through `transport`, whose server is away at
    /// the first send: the deliverer then waits out its backoff (a second), and only a stop that
    /// delivers what waits sends the fixes before the run returns.
    final class Rig: Sendable {
        let folder = TemporaryFolder()
        let journal: FixJournal
        let transport: ScriptedDeliveryTransport
        let delivery: JournalDelivery

        init(
            answer: @escaping @Sendable (JournalRecord, Int) -> ScriptedDeliveryTransport.Answer = { record, attempt in
                record.sequence == 1 && attempt == 1 ? .unavailable("not yet") : .acknowledge
            }
        ) throws {
            journal = try FixJournal(file: URL(fileURLWithPath: folder.file("j.sqlite")), comparesClocks: false, battery: { nil })
            try journal.register(destination: "server", settings: "traccar+http://localhost/?id=1")
            transport = ScriptedDeliveryTransport(answer: answer)
            delivery = JournalDelivery(
                journal: journal,
                deliverers: [Deliverer(destination: "server", journal: journal, transport: transport, owner: "service")]
            )
        }

        /// Waits until the server was first away (the deliverer now backs off).
        func firstSendRefused() async {
            await transport.wait { $0.attempts[1] == 1 }
        }

        var acknowledged: [Int64] { transport.current.acknowledged.map(\.sequence) }
    }

    /// The loop ends with every fix still waiting (the deliverer backing off): the run delivers
    /// them all before it returns, and says none is left.
    @Test func whatTheLoopJournaledIsDeliveredBeforeTheRunReturns() async throws {
        let rig = try Rig()
        let undelivered = try await rig.delivery.run(until: .never, stopTimeout: .seconds(60)) {
            for index in 1...10 { try rig.journal.append(fix(index)) }
            await rig.firstSendRefused()
        }
        #expect(undelivered.isEmpty)
        #expect(rig.acknowledged == Array(1...10), "every fix, in order, before the run returned")
    }

    /// A loop that would run for ever is cancelled by the stop, and what it journaled goes out.
    @Test func aStopCancelsTheLoopAndDeliversWhatItJournaled() async throws {
        let rig = try Rig()
        let stopAsked = ObservedState(false)
        let undelivered = try await rig.delivery.run(until: .when { _ = await stopAsked.wait(until: { $0 }, timeout: .seconds(3600)) }) {
            for index in 1...5 { try rig.journal.append(fix(index)) }
            await rig.firstSendRefused()
            stopAsked.update { $0 = true }
            try await Task.sleep(for: .seconds(3600))  // a loop that never ends: the stop cancels it
            Issue.record("the loop went on after the stop")
        }
        #expect(undelivered.isEmpty)
        #expect(rig.acknowledged == Array(1...5))
    }

    struct LoopFailed: Error {}

    /// A loop that fails: what it journaled is delivered, then its error is thrown.
    @Test func aFailingLoopsFixesAreDeliveredAndItsErrorThrown() async throws {
        let rig = try Rig()
        await #expect(throws: LoopFailed.self) {
            _ = try await rig.delivery.run(until: .never) {
                for index in 1...3 { try rig.journal.append(fix(index)) }
                await rig.firstSendRefused()
                throw LoopFailed()
            }
        }
        #expect(rig.acknowledged == [1, 2, 3], "delivered before the error was thrown")
    }

    /// A server that is down: the stop waits `stopTimeout`, then names the destination; the
    /// fixes stay in the journal for the next start.
    @Test func whatCannotBeDeliveredInTimeIsNamed() async throws {
        let rig = try Rig { _, _ in .unavailable("connection refused") }
        let undelivered = try await rig.delivery.run(until: .never, stopTimeout: .milliseconds(300)) {
            try rig.journal.append(fix(1))
        }
        #expect(undelivered == ["server"])
        #expect(try rig.journal.status(of: "server").deliveredThrough == 0, "still waiting in the journal")
    }
}
