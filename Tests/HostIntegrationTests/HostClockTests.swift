import Foundation
import Glibc
import LocationKeepAlive
import LocationKeepAliveMocks
import IntegrationSupport
import TestWaiting
import Testing

/// The host daemon (`keepalive host`, cgroup v2) on libfaketime, its wall clock jumping a year
/// forward and back while it runs: the background budget, the event budget and the watch run
/// on the monotonic clock, so every freeze comes when the budget says, and no region event is
/// lost. Times are taken by the test, on its own monotonic clock, as each line of the host
/// appears (the host's own `time` fields are its faked wall clock).
@Suite(.timeLimit(.minutes(3)), .serialized)
struct HostClockTests {
    /// The host's JSON lines, each with when the test first saw it.
    final class Lines: Sendable {
        let path: String
        private let seen = Locked<[(at: ContinuousClock.Instant, object: [String: String])]>([])
        private let task = Locked<Task<Void, Never>?>(nil)

        init(path: String) {
            self.path = path
            let seen = seen
            task.withLock {
                $0 = Task {
                    var read = 0
                    while !Task.isCancelled {
                        let lines = ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n")
                        if lines.count > read {
                            let now = ContinuousClock.now
                            let new = lines[read...].compactMap { ((try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any])?.compactMapValues { $0 as? String } }
                            seen.withLock { $0 += new.map { (now, $0) } }
                            read = lines.count
                        }
                        try? await Task.sleep(for: .milliseconds(10))  // pacing: the log read 100 times a second, each line stamped as read
                    }
                }
            }
        }

        deinit { task.withLock { $0?.cancel() } }

        /// The lines of `event` for the app, from `origin` on.
        func events(_ event: String, after origin: ContinuousClock.Instant) -> [(at: ContinuousClock.Instant, object: [String: String])] {
            seen.withLock { $0.filter { $0.at >= origin && $0.object["event"] == event } }
        }

        func first(_ event: String, after origin: ContinuousClock.Instant, within timeout: Duration) async -> ContinuousClock.Instant? {
            _ = try? await holds(within: timeout) { [self] in !events(event, after: origin).isEmpty }
            return events(event, after: origin).first?.at
        }
    }

    @Test func theHostsBudgetsAndRegionEventsIgnoreWallClockJumps() async throws {
        let keepalive = try Tools.keepalive.path
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("host-clock-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let clock = try await FakeClock(folder: folder)
        let config = ["XDG_CONFIG_HOME=\(folder)/config"]
        _ = try await runCommand("/usr/bin/env", config + [keepalive, "auth", "set", "always", "--app", "tracker"])
        let socket = "\(folder)/host.sock"
        try await GatedGPSD.run(log: HostMonitoringTests.boat.url) { gpsd in
            let output = "\(folder)/host.ndjson"
            let host = try ChildProcess(
                "/usr/bin/env",
                clock.env + config + [
                    keepalive, "host", "--socket", socket, "--freezer", "cgroup2", "--name", "keepalive.test-clock-\(UUID().uuidString.prefix(8))",
                    "--json", "--policy", "ios13", "--budget", "2s", "--grace", "1s", "--event-budget", "1s",
                    "--gpsd", "127.0.0.1:\(gpsd.port)", "--monitors", "\(folder)/monitors", "--allow-root-apps",
                ],
                output: output
            )
            defer { host.signal(SIGKILL) }
            let lines = Lines(path: output)
            try await waitUntil(timeout: .seconds(10)) { FileManager.default.fileExists(atPath: socket) }
            let log = "\(folder)/tracker.log"
            let launched = try await runCommand(
                keepalive,
                ["host", "launch", "--socket", socket, "--app", "tracker", "--modes", "location", "--user", "root", "--"]
                    + HostMonitoringTests.app(log: log, conditions: HostMonitoringTests.middle, backgroundTask: true)
            )
            #expect(launched.exitCode == 0, "\(launched.error)")
            try await waitUntil(timeout: .seconds(10)) { HostMonitoringTests.lines(log).contains("monitor ok") }
            #expect(try await gpsd.waitForWatchers(2), "the host watches gpsd once a condition is added")

            // A year ahead, then into the background, then a year back halfway through the 2 s budget.
            try await clock.jump("+365d")
            _ = try await runCommand(keepalive, ["host", "background", "--socket", socket, "--app", "tracker"])
            let background = ContinuousClock.now
            try clock.set("-365d")
            let frozen = try #require(await lines.first("frozen", after: background, within: .seconds(10)), "frozen after its budget\n\(host.tail)")
            let budget = background.duration(to: frozen)
            #expect(HostMonitoringTests.lines(log).contains("expiring"), "its task was told it expires")
            #expect(budget >= .milliseconds(1_500), "the 2 s background budget ran its length across the jumps: \(budget)")

            // The boat enters the region about 8 s into the log and leaves it 15 s later: the
            // clock jumps forward and back in between.
            try await gpsd.go()
            let jumps = Task {
                for offset in ["+365d", "-365d", "+0", "+365d"] {
                    try? await Task.sleep(for: .seconds(4))  // pacing: the clock jumps every 4 s
                    try? clock.set(offset)
                }
            }
            defer { jumps.cancel() }
            try await waitUntil(timeout: .seconds(40)) { HostMonitoringTests.lines(log).filter { $0.hasPrefix("event ") }.count == 2 }
            let told = HostMonitoringTests.lines(log).filter { $0.hasPrefix("event ") }.map { $0.split(separator: " ")[1...2].joined(separator: " ") }
            #expect(told == ["middle satisfied", "middle unsatisfied"], "no region event lost")
            // The host's line of the second event may follow the app's reading it by a moment.
            let wokenLines = { lines.events("location-event", after: frozen).filter { $0.object["delivery"] == "woken" } }
            try? await waitUntil(timeout: .seconds(5)) { wokenLines().count == 2 }
            let woken = wokenLines()
            #expect(woken.count == 2, "woken from its freeze for each event:\n\(host.tail)")
            for event in woken {
                let again = try #require(await lines.first("frozen", after: event.at, within: .seconds(10)), "frozen again after the event budget")
                let ran = event.at.duration(to: again)
                #expect(ran >= .milliseconds(800), "the 1 s event budget ran its length: \(ran)")
            }
            print("host on a jumping clock: background budget \(budget), 2 region events of 2, each followed by a freeze after the event budget")
            host.signal(SIGTERM)
            #expect(await host.wait(timeout: .seconds(15)) == 0, "the host stops cleanly: \(host.tail)")
        }
    }
}
