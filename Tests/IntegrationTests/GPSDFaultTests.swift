import Foundation
import LocationKeepAlive
import LocationKeepAliveMocks
import Testing

/// Faults gpsfake cannot make, from the scriptable mock gpsd, through the real libgps client:
/// each is a clear event and the source recovers.
@Suite(.timeLimit(.minutes(1)))
struct GPSDFaultTests {
    let start = Date()

    private func source(_ gpsd: MockGPSD, silence: Duration = .seconds(10)) -> GPSDSource {
        GPSDSource(
            host: "127.0.0.1",
            port: gpsd.port,
            reconnectPolicy: ReconnectPolicy(initialDelay: .milliseconds(50)),
            silenceTimeout: silence
        )
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

    @Test func malformedJSONIsNamedAndTheConnectionStartsAfresh() async throws {
        let gpsd = try MockGPSD(scripts: [[fix(1, 0), .malformedJSON, fix(2, 1), .stall], [fix(3, 2), .stall]])
        defer { gpsd.stop() }
        let events = Recorder(source(gpsd).events())
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
        #expect(await events.wait { latitudes($0).contains(3) })
        #expect(latitudes(events.elements) == [1, 3], "nothing half read, nothing twice (POLL and TPV)")
        #expect(losses(events.elements).first?.contains("gpsd closed the connection") == true)
    }

    @Test func aStallIsCaughtByTheReadTimeout() async throws {
        let gpsd = try MockGPSD(scripts: [[fix(1, 0), .stall], [fix(3, 2), .stall]])
        defer { gpsd.stop() }
        let began = ContinuousClock.now
        let events = Recorder(source(gpsd, silence: .seconds(1)).events())
        #expect(await events.wait { latitudes($0).contains(3) })
        let elapsed = ContinuousClock.now - began
        #expect(losses(events.elements).first?.contains("no data for 1 s") == true)
        // Not before the 1 s of silence; the upper bound only catches a hang (5.7 s was seen with
        // the whole suite and three busy loops on 2 cores).
        #expect(elapsed > .milliseconds(900) && elapsed < Tools.bound(.seconds(15)), "\(elapsed)")
    }

    @Test func aFloodIsDeliveredWholeAndInOrder() async throws {
        let count = 20_000
        let gpsd = try MockGPSD(scripts: [MockGPSD.Step.flood(count: count, from: start) + [.stall]])
        defer { gpsd.stop() }
        let began = ContinuousClock.now
        let events = Recorder(source(gpsd).events())
        #expect(await events.wait(upTo: .seconds(30)) { latitudes($0).count == count })
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
        #expect(await events.wait { latitudes($0).contains(3) })
        #expect(latitudes(events.elements).first == 1 && latitudes(events.elements).last == 3)
        #expect(losses(events.elements).first?.contains("libgps could not read") == true, "\(losses(events.elements))")
    }
}
