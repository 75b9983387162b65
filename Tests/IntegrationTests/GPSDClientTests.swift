import Foundation
import LocationKeepAlive
import LocationKeepAliveMocks
import Testing

/// The location manager against a real gpsd: one-shots, failures, gpsd going away and coming back.
@Suite(.timeLimit(.minutes(2)))
struct GPSDClientTests {
    @Test func oneShotReturnsWithinItsTimeout() async throws {
        let port = try await Tools.freePort()
        try await withGPSFake(log: NMEAFixture.mt3339.url, port: port) {
            try await waitUntilGPSDAccepts(port: port)
            let manager = LocationManager(source: GPSDSource(port: port))
            let started = ContinuousClock.now
            let fix = try await manager.requestLocation(desiredAccuracy: 10, timeout: .seconds(10))
            let elapsed = ContinuousClock.now - started
            #expect(elapsed < .seconds(10))
            #expect(abs(fix.latitude - 44.0688) < 0.001 && abs(fix.longitude - -121.3142) < 0.001)
            #expect((fix.horizontalAccuracy ?? 99) <= 10)
            #expect(fix.device?.hasPrefix("/dev/pts/") == true)
            print("one-shot from a fresh connection: \(elapsed)")
        }
    }

    @Test func unattainableAccuracyFailsAtTheTimeoutWithTheBestFix() async throws {
        let port = try await Tools.freePort()
        try await withGPSFake(log: NMEAFixture.mt3339.url, port: port) {
            try await waitUntilGPSDAccepts(port: port)
            let manager = LocationManager(source: GPSDSource(port: port))
            let started = ContinuousClock.now
            let error = try #require(
                await #expect(throws: LocationError.self) {
                    try await manager.requestLocation(desiredAccuracy: 0.01, timeout: .seconds(3))
                }
            )
            let elapsed = ContinuousClock.now - started
            #expect(error.code == .locationUnknown)
            #expect(error.bestLocation != nil, "gpsd sent fixes, only not accurate enough")
            // At the timeout, not at some later one; the upper bound leaves room for a test
            // runner whose threads are busy with the tests beside this one.
            #expect(elapsed >= .seconds(3) && elapsed < .seconds(6))
        }
    }

    @Test func noGPSDGivesAClearErrorAtOnce() async throws {
        let port = try await Tools.freePort()
        let manager = LocationManager(source: GPSDSource(port: port))
        let started = ContinuousClock.now
        let error = try #require(
            await #expect(throws: LocationError.self) {
                for try await _ in manager.updates() {}
            }
        )
        // Refused at once, not after the 5 s connect timeout (17 ms alone; the suite runs in parallel).
        #expect(ContinuousClock.now - started < Tools.bound(.seconds(3)))
        #expect(error.code == .gpsdUnreachable)
        #expect(error.message.contains("localhost:\(port)") && error.message.contains("--replay"))
        let oneShotStart = ContinuousClock.now
        await #expect(throws: LocationError.self) { try await manager.requestLocation(timeout: .seconds(30)) }
        // At once, not at its 30 s timeout (3.6 s was seen with the suite and three busy loops on 2 cores).
        #expect(ContinuousClock.now - oneShotStart < Tools.bound(.seconds(6)))
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
            let reconnected = await updates.wait(upTo: .seconds(15)) { elements in
                elements.dropFirst(beforeRestart).filter(\.isLocation).count >= 3
            }
            #expect(reconnected)
        }
        updates.cancel()
        let elements = updates.elements
        let connects = elements.filter { if case .status(.connected) = $0 { true } else { false } }.count
        #expect(connects == 2)
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
                timeout: .seconds(20)
            )
        }
        defer { server.cancel() }
        let deadline = ContinuousClock.now + .seconds(10)
        while !FileManager.default.fileExists(atPath: ready.path), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        let source = GPSDSource(
            port: port,
            reconnectPolicy: ReconnectPolicy(initialDelay: .milliseconds(100)),
            silenceTimeout: .seconds(1)
        )
        let events = Recorder(source.events())
        let started = ContinuousClock.now
        let lost = await events.wait(upTo: .seconds(5)) { elements in
            elements.contains {
                if case .status(.connectionLost(let error)) = $0 {
                    error.message.contains("no data for 1 s")
                } else {
                    false
                }
            }
        }
        #expect(lost, "\(events.elements) \(String(describing: events.error))")
        #expect(ContinuousClock.now - started < Tools.bound(.seconds(3)))
        #expect(
            await events.wait {
                $0.contains { if case .status(.reconnecting(attempt: 1, _)) = $0 { true } else { false } }
            }
        )
        events.cancel()
    }
}

extension LocationUpdate {
    var isLocation: Bool { if case .location = self { true } else { false } }
}
