import Foundation
import LocationKeepAlive
import LocationKeepAliveMocks
import IntegrationSupport
import TestWaiting
import Testing

/// The location manager against a real gpsd: one-shots, failures, gpsd going away and coming back.
///
/// Timeouts are the manager's own time, proven on a ``ManualClock``: a clock
/// the test never moves shows that an answer came without its timeout, and moving it shows
/// that a failure comes at the timeout and not before. Real-time waits only catch a hang.
@Suite(.timeLimit(.minutes(3)))
struct GPSDClientTests {
    @Test func oneShotReturnsAFixBeforeItsTimeout() async throws {
        let port = try await Tools.freePort()
        try await withGPSFake(log: NMEAFixture.mt3339.url, port: port) {
            try await waitUntilGPSDAccepts(port: port)
            let clock = ManualClock()  // never moved: the 10 s timeout cannot end the request
            // The source on the real clock: a connection gpsd drops under load is taken again.
            let manager = LocationManager(source: GPSDSource(port: port), clock: clock)
            let fix = try await manager.requestLocation(desiredAccuracy: 10, timeout: .seconds(10))
            #expect(abs(fix.latitude - 44.0688) < 0.001 && abs(fix.longitude - -121.3142) < 0.001)
            #expect((fix.horizontalAccuracy ?? 99) <= 10)
            #expect(fix.device?.hasPrefix("/dev/pts/") == true)
        }
    }

    @Test func unattainableAccuracyFailsAtTheTimeoutWithTheBestFix() async throws {
        let port = try await Tools.freePort()
        try await withGPSFake(log: NMEAFixture.mt3339.url, port: port) {
            try await waitUntilGPSDAccepts(port: port)
            let clock = ManualClock()
            // The request's timeout on the test's clock, the source on the real one: a connection
            // gpsd drops or leaves silent under load is taken again (on the test's clock, its
            // reconnection would wait for ever; a CI run saw no fix in 60 s that way).
            let manager = LocationManager(source: GPSDSource(port: port), clock: clock)
            let request = Task { try await manager.requestLocation(desiredAccuracy: 0.01, timeout: .seconds(3)) }
            // The request sleeps until its timeout, and gpsd's fixes reach it (the manager's
            // session keeps the newest as its location).
            #expect(await clock.waitForSleeper(wakingAt: .seconds(3)), "\(clock.wakes)")
            try await eventually("gpsd's fixes at the manager") { manager.location != nil }
            await clock.advance(to: .seconds(3) - .milliseconds(1))
            await clock.advance(to: .seconds(3))
            let error = try #require(await #expect(throws: LocationError.self) { try await request.value })
            #expect(error.code == .locationUnknown)
            #expect(error.bestLocation != nil, "gpsd sent fixes, only not accurate enough")
        }
    }

    @Test func noGPSDGivesAClearErrorAtOnce() async throws {
        let port = try await Tools.freePort()
        // Never moved: the source's 5 s connect timeout and the one-shot's 30 s timeout cannot
        // end anything, so each error below is the refusal itself.
        let clock = ManualClock()
        let manager = LocationManager(source: GPSDSource(port: port, clock: clock), clock: clock)
        let error = try #require(
            await #expect(throws: LocationError.self) {
                for try await _ in manager.updates() {}
            }
        )
        #expect(error.code == .gpsdUnreachable)
        #expect(error.message.contains("localhost:\(port)") && error.message.contains("--replay"))
        #expect(!error.message.contains("no answer within"), "refused, not timed out: \(error.message)")
        let oneShot = try #require(
            await #expect(throws: LocationError.self) { try await manager.requestLocation(timeout: .seconds(30)) }
        )
        #expect(oneShot.code == .gpsdUnreachable, "\(oneShot)")
        #expect(clock.now.offset == .zero)
    }

    @Test func gpsdKilledMidStreamIsReportedAndARestartedGPSDIsReconnected() async throws {
        let port = try await Tools.freePort()
        let manager = LocationManager(
            source: GPSDSource(
                port: port,
                reconnectPolicy: ReconnectPolicy(initialDelay: .milliseconds(100), maximumDelay: .milliseconds(400))
            )
        )
        let updates = try await withGPSFake(log: NMEAFixture.mt3339.url, port: port) { () -> Recorder<LocationUpdate> in
            try await waitUntilGPSDAccepts(port: port)
            let updates = Recorder(manager.updates())
            #expect(await updates.wait { $0.filter(\.isLocation).count >= 3 })
            return updates
        }
        // gpsfake and its gpsd are gone now.
        #expect(await updates.wait { $0.contains { if case .status(.connectionLost) = $0 { true } else { false } } })
        #expect(await updates.wait { $0.contains { if case .status(.reconnecting) = $0 { true } else { false } } })
        let beforeRestart = updates.elements.count
        try await withGPSFake(log: NMEAFixture.mt3339.url, port: port) {
            let reconnected = await updates.wait { elements in
                elements.dropFirst(beforeRestart).filter(\.isLocation).count >= 3
            }
            #expect(reconnected)
        }
        updates.cancel()
        let elements = updates.elements
        let isConnect = { (update: LocationUpdate) in if case .status(.connected) = update { true } else { false } }
        // One connection to the first gpsd; to the second, one that stays once fixes come (the
        // fixture may have started a gpsfake again before its body, and the source connected
        // to the gpsd it stopped).
        #expect(elements.prefix(beforeRestart).filter(isConnect).count == 1)
        let afterRestart = elements.dropFirst(beforeRestart)
        let firstFix = try #require(afterRestart.firstIndex { $0.isLocation })
        #expect(afterRestart[..<firstFix].contains(where: isConnect))
        #expect(!afterRestart[firstFix...].contains(where: isConnect))
        // Between the two gpsds, reconnection attempts only, no fix; and no fix twice in a row.
        let times = elements.compactMap { if case .location(let fix) = $0 { fix.timestamp } else { nil } }
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 != $1 })
        #expect(updates.error == nil)
    }

    @Test func aSilentGPSDIsDetectedByTheReadTimeoutAndRetried() async throws {
        let port = try await Tools.freePort()
        // A server that accepts connections and never says a word: a hung gpsd. It writes a
        // file once it listens, so the client connects only then.
        let ready = FileManager.default.temporaryDirectory.appendingPathComponent("silent-\(port)")
        defer { try? FileManager.default.removeItem(at: ready) }
        let server = Task {
            try await runCommand(
                "/usr/bin/python3",
                [
                    "-c",
                    "import socket\ns = socket.socket()\ns.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
                        + "s.bind(('127.0.0.1', \(port)))\ns.listen(8)\nopen('\(ready.path)', 'w').close()\n"
                        + "held = []\nwhile True:\n    held.append(s.accept()[0])\n",
                ],
                timeout: .seconds(180)
            )
        }
        defer { server.cancel() }
        try await waitUntil("the silent server to listen") { FileManager.default.fileExists(atPath: ready.path) }
        let clock = ManualClock()
        let source = GPSDSource(
            port: port,
            reconnectPolicy: ReconnectPolicy(initialDelay: .milliseconds(100)),
            silenceTimeout: .seconds(1),
            clock: clock
        )
        let events = Recorder(source.events())
        // Connected (the server accepted) and silent since: the source waits for 1 s of silence.
        #expect(await clock.waitForSleeper(wakingAt: .seconds(1)), "\(clock.wakes) \(events.elements)")
        await clock.advance(to: .milliseconds(999))
        #expect(!events.elements.contains { if case .status(.connectionLost) = $0 { true } else { false } })
        await clock.advance(to: .seconds(1))
        let lost = await events.wait { elements in
            elements.contains {
                if case .status(.connectionLost(let error)) = $0 {
                    error.message.contains("no data for 1 s")
                } else {
                    false
                }
            }
        }
        #expect(lost, "\(events.elements) \(String(describing: events.error))")
        #expect(
            await events.wait {
                $0.contains { if case .status(.reconnecting(attempt: 1, .milliseconds(100))) = $0 { true } else { false } }
            }
        )
        // Retried after the backoff: the second connection is silent too.
        #expect(await clock.waitForSleeper(wakingAt: .milliseconds(1100)), "\(clock.wakes)")
        await clock.advance(to: .milliseconds(1100))
        #expect(await clock.waitForSleeper(wakingAt: .milliseconds(2100)), "the second connection's silence: \(clock.wakes)")
        events.cancel()
    }
}

extension LocationUpdate {
    var isLocation: Bool { if case .location = self { true } else { false } }
}
