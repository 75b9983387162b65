import KeepAliveCore
import Testing

/// The receiver's power decided with no I/O: on while needed, off at once, starts measured.
struct ReceiverDutyTests {
    private func seconds(_ value: Double) -> Duration { .seconds(value) }

    @Test func onWhileASessionNeedsItOffAtOnce() {
        var duty = ReceiverDuty(way: .ubx, keepsBackup: true)
        #expect(duty.handle(.demand(true), at: seconds(0)).first == .switchOn)
        #expect(duty.handle(.demand(true), at: seconds(1)).isEmpty, "on already")
        #expect(duty.handle(.demand(false), at: seconds(2)).first == .switchOff)
        #expect(duty.handle(.demand(false), at: seconds(3)).isEmpty, "off already")
    }

    @Test func aStartIsMeasuredOnlyOnceTheReceiverWasKnownOffAndByANewFix() {
        var duty = ReceiverDuty(way: .ubx, keepsBackup: true)
        _ = duty.handle(.demand(true), at: seconds(0))
        #expect(!duty.handle(.fix(age: .zero), at: seconds(0.5)).contains { if case .note(.fixed) = $0 { true } else { false } },
            "found running: its state unknown, no start measured")
        _ = duty.handle(.demand(false), at: seconds(40))
        #expect(duty.ephemerisCollectedAt == seconds(40), "tracked 39.5 s: the ephemeris collected")
        _ = duty.handle(.demand(true), at: seconds(100))
        #expect(duty.handle(.fix(age: seconds(70)), at: seconds(100.1)).isEmpty, "gpsd's last fix, made before the switch on")
        let actions = duty.handle(.fix(age: .zero), at: .milliseconds(101_200))
        #expect(actions == [.note(.fixed(start: .hot, timeToFix: .milliseconds(1_200)))])
        #expect(duty.measured[.hot] == .milliseconds(1_200))
    }

    @Test func theFixWaitFollowsTheMeasuredStart() {
        var duty = ReceiverDuty(way: .ubx, keepsBackup: true)
        _ = duty.handle(.demand(true), at: seconds(0))
        _ = duty.handle(.fix(age: .zero), at: seconds(1))
        _ = duty.handle(.demand(false), at: seconds(31))  // ephemeris collected at 31
        #expect(duty.fixWait(within: seconds(60), at: seconds(600)) == seconds(6), "hot by the model: 1 s and 5 s more")
        _ = duty.handle(.demand(true), at: seconds(600))
        _ = duty.handle(.fix(age: .zero), at: seconds(602.5))
        _ = duty.handle(.demand(false), at: seconds(603))
        #expect(duty.fixWait(within: seconds(60), at: seconds(1200)) == seconds(7.5), "hot as measured: 2.5 s and 5 s more")
        #expect(duty.expectedStart(at: seconds(31 + 4 * 3600)) == .warm, "the ephemeris stale after 4 h")
        #expect(duty.fixWait(within: seconds(20), at: seconds(31 + 4 * 3600)) == seconds(20), "a warm start's 50 s, within the bound")
    }

    @Test func withNoEphemerisSeenCollectedTheLastStartIsExpected() {
        var duty = ReceiverDuty(way: .ubx, keepsBackup: true)
        #expect(duty.expectedStart(at: .zero) == .cold, "nothing known")
        _ = duty.handle(.demand(true), at: seconds(0))
        _ = duty.handle(.fix(age: .zero), at: seconds(1))
        _ = duty.handle(.demand(false), at: seconds(2))  // found running: 2 s, no ephemeris collected
        _ = duty.handle(.demand(true), at: seconds(30))
        _ = duty.handle(.fix(age: .zero), at: .milliseconds(31_600))
        _ = duty.handle(.demand(false), at: seconds(32))
        #expect(duty.ephemerisCollectedAt == nil)
        #expect(duty.expectedStart(at: seconds(60)) == .hot, "as the last start was")
        #expect(duty.fixWait(within: seconds(20), at: seconds(60)) == .milliseconds(6_600), "its 1.6 s and 5 s more, not the bound")
    }

    @Test func aWakeRefreshesTheEphemerisBeforeItGoesStale() {
        var duty = ReceiverDuty(way: .ubx, keepsBackup: true)
        _ = duty.handle(.demand(true), at: seconds(0))
        _ = duty.handle(.fix(age: .zero), at: seconds(1))
        _ = duty.handle(.demand(false), at: seconds(40))
        #expect(duty.ephemerisRefresh(at: seconds(3600), nextWake: seconds(600)) == nil, "current through the next wake")
        _ = duty.handle(.demand(true), at: seconds(4 * 3600 - 300))
        _ = duty.handle(.fix(age: .zero), at: seconds(4 * 3600 - 299))
        #expect(duty.ephemerisRefresh(at: seconds(4 * 3600 - 299), nextWake: seconds(600)) == seconds(30), "stale by the next wake: 30 s")
        _ = duty.handle(.fix(age: .zero), at: seconds(4 * 3600 - 269))
        _ = duty.handle(.demand(false), at: seconds(4 * 3600 - 269))
        #expect(duty.ephemerisCollectedAt == seconds(4 * 3600 - 269))
        #expect(duty.expectedStart(at: seconds(4 * 3600 + 300)) == .hot, "the next start hot again")
        #expect(ReceiverDuty(way: .hook, keepsBackup: false).ephemerisRefresh(at: .zero, nextWake: .zero) == nil, "nothing kept: nothing to refresh")
    }

    @Test func aFailedSwitchOnLeavesItOff() {
        var duty = ReceiverDuty(way: .modemmanager, keepsBackup: true)
        _ = duty.handle(.demand(true), at: .zero)
        #expect(duty.handle(.switchFailed(on: true, reason: "refused"), at: .zero) == [.note(.failed(way: .modemmanager, reason: "refused"))])
        #expect(!duty.isOn)
        #expect(duty.handle(.demand(true), at: seconds(1)).first == .switchOn, "tried again at the next need")
    }
}
