import Foundation
import LocationKeepAlive
import LocationKeepAliveMocks
import IntegrationSupport
import Testing

/// Faults gpsfake cannot make, from the scriptable mock gpsd, through the real libgps client:
/// each is a clear event and the source recovers.
///
/// The source's own time (its silence timeout, its reconnection backoff) runs on a
/// ``ManualClock`` the test moves: the real-time waits only catch a hang, so a loaded machine
/// makes these tests slower, never red.
@Suite(.timeLimit(.minutes(3)))
struct GPSDFaultTests {
    let start = Date()
    let clock = ManualClock()
    static let backoff = Duration.milliseconds(50)

    private func source(_ gpsd: MockGPSD, silence: Duration = .seconds(10)) -> GPSDSource {
        GPSDSource(
            host: "127.0.0.1",
            port: gpsd.port,
            reconnectPolicy: ReconnectPolicy(initialDelay: Self.backoff),
            silenceTimeout: silence,
            clock: clock
        )
    }

    /// Once the source has lost its connection, it sleeps its first backoff: checks that it is
    /// the policy's, and ends it.
    private func endFirstBackoff(_ events: Recorder<SourceEvent>) async {
        #expect(
            await events.wait { $0.contains { if case .status(.reconnecting(attempt: 1, _)) = $0 { true } else { false } } }
        )
        let wake = clock.now.offset + Self.backoff
        #expect(await clock.waitForSleeper(wakingAt: wake), "the backoff: \(clock.wakes)")
        await clock.advance(to: wake)
    }

    private func latitudes(_ events: [SourceEvent]) -> [Double] {
        events.compactMap { if case .report(let report) = $0 { report.location?.latitude } else { nil } }
    }

    private func losses(_ events: [SourceEvent]) -> [String] {
        events.compactMap { if case .status(.connectionLost(let error)) = $0 { error.message } else { nil } }
    }

    private func fix(_ latitude: Double, _ seconds: Double) -> MockGPSD.Step {
        .tpv(latitude: latitude, longitude: 4, time: start + seconds)
    }

    /// libgps's gps_waiting waits with select(), which glibc aborts on for a descriptor of 1,024
    /// or more: a process with that many files open (a test run, at 1,200; a host with its apps)
    /// had its gpsd socket there and was killed ("bit out of range 0 - FD_SETSIZE on fd_set", seen
    /// in a pristine machine's test run). The reader waits with poll() instead: with every
    /// descriptor below 1,100 held by its shell, `keepalive locate` gets its fix.
    @Test func aSocketAboveDescriptor1024IsReadLikeAnyOther() async throws {
        let gpsd = try MockGPSD(scripts: [[.tpv(latitude: 52.1, longitude: 4.3, time: Date())]])
        defer { gpsd.stop() }
        let script = "for fd in $(seq 3 1100); do eval \"exec $fd</dev/null\"; done; exec \"$0\" \"$@\""
        let result = try await runCommand(
            "/bin/bash",
            ["-c", script, Tools.keepalive.path, "locate", "--gpsd", "127.0.0.1:\(gpsd.port)", "--timeout", "10"]
        )
        #expect(result.exitCode == 0, "a fix, not an abort in glibc: \(result.status) \(result.error)")
        #expect(result.lines.contains { $0.contains("52.1000000, 4.3000000") }, "\(result.lines)")
    }

    @Test func malformedJSONIsNamedAndTheConnectionStartsAfresh() async throws {
        let gpsd = try MockGPSD(scripts: [[fix(1, 0), .malformedJSON, fix(2, 1), .stall], [fix(3, 2), .stall]])
        defer { gpsd.stop() }
        let events = Recorder(source(gpsd).events())
        await endFirstBackoff(events)
        #expect(await events.wait { latitudes($0).contains(3) })
        // Fix 2 came after the bad line: it arrives only from the new connection (gpsd's POLL answer).
        let order = events.elements.compactMap { event -> String? in
            switch event {
            case .report(let report): report.location.map { "fix \(Int($0.latitude))" }
            case .status(.connectionLost): "lost"
            case .status(.connected): "connected"
            default: nil
            }
        }
        #expect(Array(order.prefix(3)) == ["connected", "fix 1", "lost"], "\(order)")
        // Then a new connection: gpsd's current fix (its POLL answer, fix 2 or already fix 3), and
        // the stream; never a fix twice.
        let after = Array(order.dropFirst(3))
        #expect(after.contains("connected") && after.last == "fix 3", "\(order)")
        let fixes = order.filter { $0.hasPrefix("fix") }
        #expect(Set(fixes).count == fixes.count, "\(order)")
        let lost = losses(events.elements)
        #expect(lost.count == 1 && lost[0].contains("not a gpsd message") && lost[0].contains("52.1,,,"), "\(lost)")
    }

    @Test func aCloseInTheMiddleOfAMessageDeliversNothingHalfRead() async throws {
        let gpsd = try MockGPSD(scripts: [[fix(1, 0)] + MockGPSD.Step.halfMessage, [fix(3, 2), .stall]])
        defer { gpsd.stop() }
        let events = Recorder(source(gpsd).events())
        await endFirstBackoff(events)
        #expect(await events.wait { latitudes($0).contains(3) })
        #expect(latitudes(events.elements) == [1, 3], "nothing half read, nothing twice (POLL and TPV)")
        #expect(losses(events.elements).first?.contains("gpsd closed the connection") == true)
    }

    @Test func aStallIsCaughtByTheReadTimeout() async throws {
        let gpsd = try MockGPSD(scripts: [[fix(1, 0), .stall], [fix(3, 2), .stall]])
        defer { gpsd.stop() }
        let events = Recorder(source(gpsd, silence: .seconds(1)).events())
        #expect(await events.wait { latitudes($0).contains(1) })
        // The last message came at 0: the source watches for one second of silence.
        #expect(await clock.waitForSleeper(wakingAt: .seconds(1)), "\(clock.wakes)")
        await clock.advance(to: .milliseconds(999))
        #expect(losses(events.elements).isEmpty, "not before a whole second of silence")
        await clock.advance(to: .seconds(1))
        #expect(await events.wait { !losses($0).isEmpty })
        #expect(losses(events.elements).first?.contains("no data for 1 s") == true, "\(losses(events.elements))")
        await endFirstBackoff(events)
        #expect(await events.wait { latitudes($0).contains(3) })
        #expect(latitudes(events.elements) == [1, 3])
    }

    @Test func aFloodIsDeliveredWholeAndInOrder() async throws {
        let count = 20_000
        let gpsd = try MockGPSD(scripts: [MockGPSD.Step.flood(count: count, from: start) + [.stall]])
        defer { gpsd.stop() }
        let began = ContinuousClock.now
        let events = Recorder(source(gpsd).events())
        #expect(await events.wait { latitudes($0).count == count })
        let times = events.elements.compactMap { if case .report(let report) = $0 { report.time } else { nil } }
        #expect(times.count == count && zip(times, times.dropFirst()).allSatisfy { $0 < $1 })
        #expect(losses(events.elements).isEmpty)
        print("flood: \(count) TPVs through libgps in \(ContinuousClock.now - began)")
    }

    @Test func anUnknownClassIsSkipped() async throws {
        let gpsd = try MockGPSD(scripts: [[fix(1, 0), .unknownClass, fix(2, 1), .stall]])
        defer { gpsd.stop() }
        let events = Recorder(source(gpsd).events())
        #expect(await events.wait { latitudes($0).contains(2) })
        #expect(latitudes(events.elements) == [1, 2])
        #expect(losses(events.elements).isEmpty)
    }

    @Test func aHugeLineIsAnErrorAndTheConnectionStartsAfresh() async throws {
        let gpsd = try MockGPSD(scripts: [
            [fix(1, 0), .hugeLine(bytes: 200_000), fix(2, 1), .stall], [fix(3, 2), .stall],
        ])
        defer { gpsd.stop() }
        let events = Recorder(source(gpsd).events())
        await endFirstBackoff(events)
        #expect(await events.wait { latitudes($0).contains(3) })
        #expect(latitudes(events.elements).first == 1 && latitudes(events.elements).last == 3)
        #expect(losses(events.elements).first?.contains("libgps could not read") == true, "\(losses(events.elements))")
    }
}
