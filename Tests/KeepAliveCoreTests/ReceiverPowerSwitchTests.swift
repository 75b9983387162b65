import Clocks
import Foundation
import KeepAliveCore
import LocationKeepAliveMocks
import Testing

/// The receiver's power switched by the manager's sessions, through a recording control: in
/// order, one switch at a time, on while a session needs it, off once none does; coarse requests
/// and the keep-alive poll answered from the last fix without a session.
@Suite(.timeLimit(.minutes(1))) struct ReceiverPowerSwitchTests {
    let source = ScriptedLocationSource()
    let clock = TestClock<Duration>()
    let now = Date(timeIntervalSince1970: 1_700_000_000)

    /// Records each switch; two at once would be a defect.
    final class RecordingControl: ReceiverPowerControl {
        let switched = Locked<(log: [Bool], running: Int, overlapped: Bool)>(([], 0, false))
        var way: ReceiverPowerWay { .ubx }
        var keepsBackup: Bool { true }
        func switchOn() async throws(ReceiverPowerError) { await record(true) }
        func switchOff() async throws(ReceiverPowerError) { await record(false) }
        private func record(_ on: Bool) async {
            switched.withLock { state in
                state.running += 1
                state.overlapped = state.overlapped || state.running > 1
            }
            await Task.yield()
            switched.withLock { state in
                state.running -= 1
                state.log.append(on)
            }
        }
    }

    private func makeManager(_ control: RecordingControl) -> (LocationManager, ReceiverPowerSwitch) {
        let now = self.now
        let power = ReceiverPowerSwitch(control: control)
        return (LocationManager(source: source, clock: clock, wallClock: { now }, receiverPower: power), power)
    }

    @Test func onWhileASessionNeedsItAndOffWhenItsOneShotIsAnswered() async throws {
        let control = RecordingControl()
        let (manager, power) = makeManager(control)
        async let fix = manager.requestLocation(timeout: .seconds(30))
        await source.waitForSessions(1)
        source.sendFix(latitude: 1, longitude: 2, accuracy: 5, at: now)
        _ = try await fix
        await power.settled()  // the off is decided before the one-shot's caller goes on
        #expect(control.switched.withLock { $0.log } == [true, false])
        #expect(!power.duty.isOn)
    }

    @Test func manyConsumersComingAndGoingSwitchInOrderOneAtATime() async throws {
        let control = RecordingControl()
        let (manager, power) = makeManager(control)
        for round in 0..<20 {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<3 { group.addTask { _ = try await manager.requestLocation(timeout: .seconds(30)) } }
                // Fixes while the round's one-shots wait: one may join its session after a fix
                // was given, and then waits for the next (its timeout is on the test clock, which
                // stands still: a fix sent once per answer hung a loaded ThreadSanitizer run).
                group.addTask { [source, now] in
                    while !Task.isCancelled {
                        source.sendFix(latitude: 1, longitude: Double(round), accuracy: 5, at: now + Double(round))
                        try? await Task.sleep(for: .milliseconds(10))  // pacing: a fix every 10 ms, as a receiver's
                    }
                }
                for _ in 0..<3 { try await group.next() }  // the feeder ends only when cancelled
                group.cancelAll()
            }
        }
        await power.settled()
        let (log, _, overlapped) = control.switched.withLock { $0 }
        #expect(!overlapped, "one switch at a time")
        #expect(log.first == true && log.last == false, "\(log)")
        #expect(zip(log, log.dropFirst()).allSatisfy { $0 != $1 }, "on and off alternate: \(log)")
    }

    @Test func coarseRequestsAndTheKeepAlivePollPowerNothing() async throws {
        let control = RecordingControl()
        let (manager, power) = makeManager(control)
        #expect(throws: LocationError.self, "no fix yet: the poll powers nothing and fails") { try manager.keepAlivePoll() }
        async let fix = manager.requestLocation(timeout: .seconds(30))
        await source.waitForSessions(1)
        source.sendFix(latitude: 1, longitude: 2, accuracy: 5, at: now)
        _ = try await fix
        await power.settled()
        let switches = control.switched.withLock { $0.log.count }
        let polled = try manager.keepAlivePoll()
        let coarse = try await manager.requestLocation(desiredAccuracy: LocationManager.coarseAccuracy, timeout: .seconds(30))
        await power.settled()
        #expect(control.switched.withLock { $0.log.count } == switches, "no switch for either")
        #expect(polled.latitude == 1 && coarse.latitude == 1)
        #expect(source.activeSessions == 0)
    }
}
