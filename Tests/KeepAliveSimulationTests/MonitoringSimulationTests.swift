import Foundation
import KeepAliveCore
import KeepAliveMonitoring
import KeepAliveSimulation
import LocationKeepAliveMocks
import Testing

/// The monitoring strategy in virtual time: the boat's track played from launch, the app
/// suspended in the background and woken by each of its conditions' events for the event
/// budget, and the timeline showing every wake-up.
struct MonitoringSimulationTests {
    static let boat = NMEAFixture("bundg_zeus_9.log", folder: "tracks")
    static let conditions: [String: MonitorCondition] = [
        "start": .circle(center: Coordinate(latitude: 52.850155, longitude: 5.3136167), radius: 150),
        "middle": .circle(center: Coordinate(latitude: 52.8491, longitude: 5.3112), radius: 120),
        "end": .circle(center: Coordinate(latitude: 52.84785, longitude: 5.30835), radius: 100),
    ]

    @Test func eachEventWakesTheSuspendedAppForTheEventBudgetAndTheTimelineShowsIt() throws {
        let fixes = try NMEALog.fixes(in: Self.boat.url)
        var simulator = Simulator(
            strategy: .monitoring,
            duration: .seconds(600),
            fixes: fixes,
            recordsTimeline: true
        )
        simulator.conditions = Self.conditions
        simulator.conditionsAssume = .unsatisfied
        let report = simulator.run()

        // The same fixes through a monitor of the test's own: the events the simulation must show.
        let monitor = try LocationMonitor(named: "expected")
        try monitor.add(Self.conditions, assuming: .unsatisfied)
        let origin = try #require(fixes.compactMap(\.timestamp).first)
        let expected = fixes.flatMap { fix in
            monitor.evaluate(fix).map { ($0.date.timeIntervalSince(origin), "\($0.identifier) \($0.state)") }
        }
        #expect(expected.count >= 5, "the boat leaves start, crosses middle and reaches end")
        #expect(report.locationEvents == expected.count)
        #expect(report.wakeups == expected.count, "each event woke the app; nothing else did")
        let timeline = try #require(report.timeline)
        #expect(timeline.locationEvents.map(\.at) == expected.map(\.0))
        #expect(timeline.locationEvents.map(\.label) == expected.map(\.1))

        // Suspended at once in the background; resumed at each event; suspended again 10 s
        // (iOS's event budget) after the last of events less than 10 s apart.
        let budget = ExecutionProfile.ios13.eventBudget.seconds
        var woken: [(from: Double, until: Double)] = []
        for (at, _) in expected {
            if let last = woken.last, at < last.until { woken[woken.count - 1].until = at + budget } else { woken.append((at, at + budget)) }
        }
        let background = timeline.states.filter { $0.label == "background" }.map { ($0.start, $0.end) }
        #expect(background.map(\.0) == [0] + woken.map(\.from), "resumed at each event")
        #expect(background.dropFirst().map(\.1) == woken.map(\.until), "suspended again after the budget")
        #expect(report.suspensions.first?.cause == "nothingKeepsItAlive")
        #expect(report.suspensions.dropFirst().allSatisfy { $0.cause == "eventHandled" })

        let svg = timeline.svg(title: "monitoring")
        #expect(svg.components(separatedBy: "class=\"lane\"").count - 1 == 6, "a lane for the location events")
        #expect(svg.components(separatedBy: "class=\"event\"").count - 1 == expected.count)
    }

    /// The host's rule for wakes, played by the simulator with the host's own machine: an
    /// event wakes the suspended app only as often as its wake budget allows; one it does not
    /// allow waits for the next wake it does, which tells every event that waited at once; an
    /// event while the app is awake in the background gives it the event budget again, and
    /// spends no wake.
    @Test(arguments: [60, 120, 3600])
    func eventsWakeTheAppOnlyAsOftenAsItsWakeBudgetAllows(interval: Int) throws {
        let fixes = try NMEALog.fixes(in: Self.boat.url)
        var simulator = Simulator(strategy: .monitoring, duration: .seconds(600), fixes: fixes, recordsTimeline: true)
        simulator.conditions = Self.conditions
        simulator.conditionsAssume = .unsatisfied
        simulator.eventWakes = WakeBudget(burst: 1, interval: .seconds(Int64(interval)))
        let report = simulator.run()

        let monitor = try LocationMonitor(named: "expected")
        try monitor.add(Self.conditions, assuming: .unsatisfied)
        let origin = try #require(fixes.compactMap(\.timestamp).first)
        let events = fixes.flatMap { fix in monitor.evaluate(fix).map { $0.date.timeIntervalSince(origin) } }
        // The rule in words, on the events' times: the wakes it gives.
        let budget = ExecutionProfile.ios13.eventBudget.seconds
        let every = Double(interval)
        var (wakes, periods, extensions, waiting) = ([Double](), [(from: Double, until: Double)](), 0, false)
        func serveWaiting(before time: Double) {
            guard waiting, let last = wakes.last, last + every < time else { return }
            wakes.append(last + every)
            periods.append((last + every, last + every + budget))
            waiting = false
        }
        for at in events {
            serveWaiting(before: at)
            if let period = periods.last, at < period.until {  // awake: the budget again, no wake spent
                periods[periods.count - 1].until = at + budget
                extensions += 1
            } else if let last = wakes.last, at < last + every {
                waiting = true
            } else {
                wakes.append(at)
                periods.append((at, at + budget))
            }
        }
        serveWaiting(before: 600)
        #expect(report.locationEvents == events.count)
        #expect(report.wakeups == wakes.count + extensions)
        let background = try #require(report.timeline).states.filter { $0.label == "background" }.dropFirst()
        #expect(background.count == periods.count)
        for (shown, period) in zip(background, periods) {
            #expect(abs(shown.start - period.from) < 0.01 && abs(shown.end - period.until) < 0.01, "\(shown) against \(period)")
        }
        if interval == 3600 { #expect(wakes.count == 1, "one wake in the hour: the first event's") }
        if interval == 120 { #expect(wakes.contains { !events.contains($0) }, "a wake put off, then given") }
    }

    @Test func withoutConditionsNothingWakesIt() {
        let report = Simulator(strategy: .monitoring, duration: .seconds(600), fixes: (try? NMEALog.fixes(in: Self.boat.url)) ?? []).run()
        #expect(report.locationEvents == 0 && report.wakeups == 0)
        #expect(report.suspendedAt == 0 && report.suspensions.count == 1)
    }
}

/// Who is watched for, as under the host: always anywhere; when in use only in the foreground.
struct MonitoringAuthorizationSimulationTests {
    func simulate(_ authorization: LocationAuthorization, script: String = "0 background") throws -> SimulationReport {
        var simulator = Simulator(
            authorization: authorization,
            strategy: .monitoring,
            duration: .seconds(600),
            script: try SimulationScript(parsing: script),
            fixes: try NMEALog.fixes(in: MonitoringSimulationTests.boat.url)
        )
        simulator.conditions = MonitoringSimulationTests.conditions
        simulator.conditionsAssume = .unsatisfied
        return simulator.run()
    }

    @Test func whenInUseIsWatchedOnlyInTheForegroundAndDeniedNever() throws {
        let always = try simulate(.always).locationEvents
        #expect(always >= 5)
        #expect(try simulate(.whenInUse).locationEvents == 0, "in the background: not watched")
        #expect(try simulate(.denied).locationEvents == 0)
        #expect(try simulate(.whenInUse, script: "10m background").locationEvents == always, "in the foreground throughout the track")
        // Foreground for the first minute only: the events after it are not told.
        let firstMinute = try simulate(.whenInUse, script: "60s background").locationEvents
        #expect(firstMinute > 0 && firstMinute < always)
    }
}
