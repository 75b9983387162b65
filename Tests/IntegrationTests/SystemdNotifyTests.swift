import Foundation
import Glibc
import LocationKeepAlive
import LocationKeepAliveMocks
import Subprocess
import IntegrationSupport
import Testing

/// `keepalive run` as a `Type=notify` unit sees it: a socket of the test's own stands in for
/// systemd's `$NOTIFY_SOCKET`, and `$WATCHDOG_USEC` is set as `WatchdogSec=` sets it.
@Suite(.timeLimit(.minutes(3)))
struct SystemdNotifyTests {
    private func alwaysAuthorized() async throws -> String {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("notify-\(UUID().uuidString).json")
        _ = try await runCommand(try Tools.keepalive.path, ["auth", "set", "always", "--app", "unit", "--auth-file", file.path])
        return file.path
    }

    /// `keepalive run` against gpsd on `port`, always authorized, its notifications to `listener`;
    /// `body` gets it running and the first `READY=1` message with its `STATUS=` line.
    private func runService(
        port: Int,
        listener: NotifyListener,
        _ body: (RunningCommand, NotifyListener.Message, String) async throws -> Void
    ) async throws -> TerminationStatus {
        let authFile = try await alwaysAuthorized()
        let (_, status) = try await RunningCommand.run(
            try Tools.keepalive.path,
            ["run", "--gpsd", "localhost:\(port)", "--app", "unit", "--auth-file", authFile, "--audio-device", "null"],
            environment: ["NOTIFY_SOCKET": listener.path]
        ) { command in
            let readyMessage = await listener.wait(for: Tools.patience) { $0 == "READY=1" }
            let ready = try #require(readyMessage)
            try await body(command, ready, ready.lines.first { $0.hasPrefix("STATUS=") } ?? "")
            try command.send(.terminate)
        }
        return status
    }

    @Test func readyOnlyOnceGPSDAnswersWithStatusLines() async throws {
        let listener = try NotifyListener()
        defer { listener.close() }
        let port = try await Tools.freePort()
        try await withGPSFake(log: NMEAFixture("ublox-8.log").url, port: port) {
            try await waitUntilGPSDAccepts(port: port)
            let status = try await runService(port: port, listener: listener) { _, ready, status in
                // Ready because gpsd answered, not at the latest (its status would say no word came).
                #expect(status.contains("location: connected to gpsd 3.22 at localhost:\(port)") || status.contains("fixes"))
                // No READY before gpsd answered: every earlier message is a status alone.
                let before = listener.messages.prefix { $0.at < ready.at }
                #expect(before.allSatisfy { !$0.lines.contains("READY=1") })
                let withFixes = await listener.wait(for: Tools.patience) { $0.contains(", last 20") }
                #expect(withFixes != nil, "a STATUS with fixes")
            }
            #expect(status == .exited(0))
            // Sent before the exit, read by the listener's thread when it gets to it.
            #expect(await listener.wait(for: Tools.patience) { $0 == "STOPPING=1" } != nil)
            #expect(listener.messages.filter { $0.lines.contains("READY=1") }.count == 1)
        }
    }

    @Test func readyWithTheReasonWhenGPSDCannotBeReached() async throws {
        let listener = try NotifyListener()
        defer { listener.close() }
        let port = try await Tools.freePort()  // nothing listens there
        let status = try await runService(port: port, listener: listener) { _, _, status in
            #expect(status.contains("cannot reach gpsd at localhost:\(port)"), "\(status)")
        }
        #expect(status == .exited(0))
    }

    /// The watchdog pings while the run loop turns; a run loop that hangs (the fault injected
    /// after 3 s) stops them, and systemd, seeing no ping for `WatchdogSec`, kills the service
    /// (SIGABRT, then SIGKILL; here SIGKILL at once: test processes inherit a blocked SIGABRT).
    @Test func aHungRunLoopStopsTheWatchdogAndIsCaught() async throws {
        let listener = try NotifyListener()
        defer { listener.close() }
        let watchdog = Duration.seconds(1)
        let (caughtAfter, status) = try await RunningCommand.run(
            try Tools.keepalive.path,
            ["run", "--replay", NMEAFixture.mt3339.url.path, "--loop", "--audio-device", "null"],
            environment: [
                "NOTIFY_SOCKET": listener.path, "WATCHDOG_USEC": "1000000",
                "KEEPALIVE_FAULT_HANG_RUN_LOOP_AFTER": "3",
            ]
        ) { command -> Duration in
            // As systemd does: the watchdog counts from READY=1 (a slow start, under
            // ThreadSanitizer, is not a hang), and the service is dead when no WATCHDOG=1 came
            // for WatchdogSec.
            let readyMessage = await listener.wait(for: Tools.patience) { $0 == "READY=1" }
            let started = try #require(readyMessage).at
            var last = started
            while true {
                try await Task.sleep(for: .milliseconds(50))  // pacing: the watchdog's silence looked at 20 times a second, as systemd's timer would
                if let ping = listener.messages.last(where: { $0.lines.contains("WATCHDOG=1") }) { last = ping.at }
                if ContinuousClock.now - last > watchdog { break }
                #expect(ContinuousClock.now - started < .seconds(20), "the hang was never caught")
                if ContinuousClock.now - started > .seconds(20) { break }
            }
            try command.send(.kill)
            // When systemd would have caught it: WatchdogSec after the last ping, by the
            // listener thread's own timestamps (this task may have been late to look: the test
            // runner's threads are shared with every test running beside this one).
            return last + watchdog - started
        }
        let pings = listener.messages.filter { $0.lines.contains("WATCHDOG=1") }
        let gaps = zip(pings.dropFirst(), pings).map { $0.at - $1.at }
        print("watchdog: \(pings.count) pings, largest gap while alive \(gaps.max() ?? .zero), caught after \(caughtAfter)")
        #expect(pings.count >= 8, "about 4 pings a second for 3 s")
        #expect(gaps.allSatisfy { $0 < watchdog }, "alive, it never missed WatchdogSec")
        // The hang starts 3 s after the run loop did (about when READY=1 came); caught 1 s later.
        #expect(caughtAfter >= .milliseconds(2500) && caughtAfter < .seconds(8))
        #expect(status == .signaled(SIGKILL))
    }
}
