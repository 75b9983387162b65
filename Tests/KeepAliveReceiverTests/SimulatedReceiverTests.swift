import FoundationEssentials
import KeepAliveCore
import KeepAliveReceiver
import ReceiverSimulation
import Testing

/// The simulator's model on explicit times: what gpsd's writes do to it, and its starts.
struct SimulatedReceiverTests {
    private let here = SimulatedTrack.still(latitude: 52.52, longitude: 13.405)
    private let date = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func backupSilencesItAndInputWakesItHot() {
        var receiver = SimulatedReceiver(track: here, first: .cold, at: 0)
        #expect(receiver.sentences(at: 10, date: date).count == 2, "acquiring: no position yet")
        #expect(receiver.sentences(at: 30, date: date).count == 3, "a cold start's fix at 26 s")
        _ = receiver.sentences(at: 60, date: date)  // tracked 34 s: the ephemeris collected
        _ = receiver.take(UBXFrame.backup.bytes, at: 61)
        #expect(receiver.sentences(at: 62, date: date).isEmpty, "backup: nothing output")
        _ = receiver.take(UBXFrame.wakeUp, at: 600)
        #expect(receiver.log.last?.event == "on" && receiver.log.last?.start == "hot")
        #expect(receiver.sentences(at: 600.5, date: date).count == 2)
        #expect(receiver.sentences(at: 601, date: date).count == 3, "a hot fix 1 s after the wake")
    }

    @Test func aStaleEphemerisMakesAWarmStartAndAColdResetACold() {
        var receiver = SimulatedReceiver(track: here, first: .hot, at: 0)
        _ = receiver.sentences(at: 40, date: date)
        _ = receiver.take(UBXFrame.backup.bytes, at: 40)
        _ = receiver.take(UBXFrame.wakeUp, at: 40 + 4 * 3600 + 1)
        #expect(receiver.log.last?.start == "warm", "4 h in backup: the ephemeris stale")
        let answer = receiver.take(UBXFrame.reset(.cold).bytes, at: 40 + 4 * 3600 + 2)
        #expect(answer == UBXFrame.acknowledge(UBXFrame.reset(.cold)).bytes)
        #expect(receiver.log.last?.start == "cold")
    }

    @Test func itAnswersGpsdsProbeAndTheSupplysCommands() {
        var receiver = SimulatedReceiver(track: here, first: .hot, at: 0)
        #expect(receiver.take(UBXFrame.pollVersion.bytes, at: 1) == SimulatedReceiver.version.bytes)
        receiver.command(false, at: 2)
        #expect(receiver.sentences(at: 3, date: date).isEmpty)
        receiver.command(true, at: 100)
        #expect(receiver.log.suffix(2).map(\.event) == ["off", "on"])
        #expect(receiver.log.last?.start == "hot", "a modem's engine keeps its data")
    }

    @Test func aPathIsFollowedAtItsPace() {
        let path = SimulatedTrack(points: [(52.0, 13.0), (52.001, 13.0)], secondsPerPoint: 10)
        let halfway = path.position(at: 5)
        #expect(abs(halfway.latitude - 52.0005) < 1e-9)
        #expect(abs(halfway.speed - 11.1) < 0.2, "111 m in 10 s: \(halfway.speed)")
        #expect(abs(halfway.course) < 0.001 || abs(halfway.course - 360) < 0.001, "north")
    }

    @Test func theErrorConvergesAfterAStart() {
        let model = ReceiverStartModel()
        #expect(model.error(after: .cold, sinceFirstFix: .zero) == 30)
        #expect(model.error(after: .cold, sinceFirstFix: .seconds(60)) < 3.1, "converged to 2.5 m within a minute")
        #expect(model.start(ephemerisAge: .seconds(3_600), backupKept: true) == .hot)
        #expect(model.start(ephemerisAge: .seconds(5 * 3_600), backupKept: true) == .warm)
        #expect(model.start(ephemerisAge: .seconds(15 * 86_400), backupKept: true) == .cold, "the almanac too old")
        #expect(model.start(ephemerisAge: .seconds(60), backupKept: false) == .cold)
        #expect(model.kind(ofTimeToFix: .seconds(2)) == .hot)
        #expect(model.kind(ofTimeToFix: .seconds(26)) == .cold)
    }
}
