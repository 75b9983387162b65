import Foundation
import FoundationXML
import KeepAliveCore
import KeepAliveSimulation
import Testing

/// `simulate --plot`: the timeline recorded from the model and the SVG drawn from it.
@Suite struct SimulationTimelineTests {
    private func simulate(_ script: String, authorization: LocationAuthorization, duration: Duration) throws
        -> SimulationReport
    {
        Simulator(
            profile: .ios13,
            authorization: authorization,
            strategy: .hybrid,
            duration: duration,
            script: try SimulationScript(parsing: script),
            recordsTimeline: true
        ).run()
    }

    /// Every element of the SVG by class, parsed as XML (so it is well-formed).
    private func classes(_ svg: String) throws -> [String: Int] {
        final class Counter: NSObject, XMLParserDelegate {
            var counts: [String: Int] = [:]
            func parser(
                _ parser: XMLParser,
                didStartElement name: String,
                namespaceURI: String?,
                qualifiedName: String?,
                attributes: [String: String] = [:]
            ) {
                if let kind = attributes["class"] { counts[kind, default: 0] += 1 }
            }
        }
        let parser = XMLParser(data: Data(svg.utf8))
        let counter = Counter()
        parser.delegate = counter
        #expect(parser.parse(), "well-formed: \(String(describing: parser.parserError))")
        return counter.counts
    }

    @Test func everyPollPulseStateAndScriptEventIsOneMark() throws {
        let report = try simulate(
            "0 background\n5m auth when-in-use\n8m gps down\n12m auth always\n15m foreground",
            authorization: .always,
            duration: .seconds(1200)
        )
        let timeline = try #require(report.timeline)
        #expect(timeline.location.count == report.locationPolls)
        #expect(timeline.audio.count == report.audioPulses)
        #expect(report.locationPolls > 10 && report.audioPulses > 10)
        #expect(timeline.states.map(\.label) == ["active", "inactive", "background", "inactive", "active"])
        #expect(timeline.script.map(\.label) == ["background", "auth when-in-use", "gps down", "auth always", "foreground"])
        #expect(timeline.backgroundTasks.count >= 1)
        #expect(timeline.states.last?.end == 1200)

        let counts = try classes(timeline.svg(title: "hybrid <test> & more"))
        #expect(counts["poll"] == report.locationPolls)
        #expect(counts["pulse"] == report.audioPulses)
        #expect(counts["state"] == timeline.states.count)
        #expect(counts["task"] == timeline.backgroundTasks.count)
        #expect(counts["script"] == 5)
        #expect(counts["lane"] == 5)
        #expect((counts["tick"] ?? 0) >= 5 && (counts["tick"] ?? 0) <= 13)
    }

    @Test func aSuspendedAppShowsItsSuspension() throws {
        // Denied: no poll may keep it alive, and with no audio mode nothing else does.
        var simulator = Simulator(
            profile: .ios13,
            authorization: .denied,
            strategy: .backgroundTask,
            duration: .seconds(600),
            backgroundModes: [],
            recordsTimeline: true
        )
        simulator.recordsTimeline = true
        let report = simulator.run()
        let timeline = try #require(report.timeline)
        let suspended = try #require(timeline.states.first { $0.label == "suspended" })
        #expect(abs(suspended.start - 30) < 1, "about 30 s of background time on ios13")
        #expect(suspended.end == 600)
        #expect(try classes(timeline.svg(title: "t"))["state"] == timeline.states.count)
    }

    @Test func withoutThePlotNoTimelineIsKept() {
        let report = Simulator(strategy: .hybrid, duration: .seconds(60)).run()
        #expect(report.timeline == nil)
    }
}
