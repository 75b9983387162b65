import Foundation
import LocationKeepAlive
import LocationKeepAliveMocks
import IntegrationSupport
import Testing

/// Every bundled log through a real gpsd: our libgps client, our manager and the `keepalive`
/// CLI all watch the same gpsd as gpsd's own watcher, and must see exactly what it saw.
@Suite(.timeLimit(.minutes(5)))
struct GPSDAgreementTests {
    /// Four logs at a time: each starts a gpsd, a gated feeder and two commands.
    private static let turns = Turns(4)

    @Test(arguments: NMEAFixture.all)
    func deliversWhatGPSDDecodes(log: NMEAFixture) async throws {
        let keepalive = try Tools.keepalive
        try await Self.turns.take { try await agree(log: log, keepalive: keepalive) }
    }

    private func agree(log: NMEAFixture, keepalive: URL) async throws {
        try await GatedGPSD.run(log: log.url) { gpsd in
            // gpsd says nothing until the feed, and a watch silent for 10 s (GPSDSource's default)
            // is treated as lost and reconnects, missing what is fed meanwhile. The test is not
            // about silence: the clients in this process wait an hour, and the two commands, which
            // keep the default, start together once those watch (and four logs run at a time).
            let quiet = Duration.seconds(3600)
            let raw = Recorder(GPSDSource(port: gpsd.port, silenceTimeout: quiet).events())
            let manager = LocationManager(source: GPSDSource(port: gpsd.port, silenceTimeout: quiet))
            let everything = Recorder(manager.updates(.everything))
            let filtered = Recorder(manager.updates())
            #expect(await raw.wait { $0.contains(.status(.connected("gpsd 3.22 at localhost:\(gpsd.port)"))) })
            #expect(await everything.wait { $0.contains { if case .status(.connected) = $0 { true } else { false } } })
            let interrupt = Interrupt()
            let cliConnected = Interrupt()
            let cliFixCount = Locked(0)
            let cli = Task {
                try await runCommand(
                    keepalive.path,
                    ["watch", "--gpsd", "localhost:\(gpsd.port)", "--json"],
                    interrupt: interrupt,
                    timeout: Tools.patience * 3,
                    onLine: { line in
                        if line.contains("\"status\":\"connected\"") { cliConnected.fire() }
                        if line.contains("\"class\":\"fix\"") { cliFixCount.withLock { $0 += 1 } }
                    }
                )
            }
            defer { interrupt.fire() }
            // A log with fixes ends `locate` at its first; one without leaves it waiting until the
            // test stops it once the whole log was fed (a short timeout of its own could end before
            // the feed starts on a loaded machine, and gpsd would never see its five watchers).
            let stopLocate = Interrupt()
            let locate = Task {
                try await runCommand(
                    keepalive.path,
                    ["locate", "--gpsd", "localhost:\(gpsd.port)", "--json", "--timeout", "600"],
                    interrupt: stopLocate,
                    timeout: Tools.patience * 2
                )
            }
            defer { stopLocate.fire() }
            // Everyone watches before the first sentence is written: gpsd has five watchers (ours
            // raw, the manager, watch, locate, which prints nothing until its fix, and its own).
            try await eventually("keepalive watch connected") { cliConnected.isFired }
            #expect(try await gpsd.waitForWatchers(5), "gpsd took the watch of keepalive locate")
            try await gpsd.go()
            let oracle = try await gpsd.reports()
            // A client may lag behind gpsd's own watcher on a loaded machine: wait for it to have
            // as many as gpsd sent (bounded), then for anything more.
            let reported = oracle.count
            await raw.wait { $0.count { if case .report = $0 { true } else { false } } >= reported }
            await raw.waitUntilQuiet()
            let located = oracle.filter { $0.mode >= 2 && $0.lat != nil && $0.lon != nil }
            await everything.wait {
                $0.count { if case .location = $0 { true } else { false } } >= located.count
            }
            await everything.waitUntilQuiet()

            // 1. The libgps client: every TPV gpsd sent, in order, same mode, time and position.
            let ours = raw.elements.compactMap { if case .report(let report) = $0 { report } else { nil } }
            #expect(ours.filter { $0.mode >= .twoDimensional }.count == oracle.filter { $0.mode >= 2 }.count)
            #expect(ours.count == oracle.count)
            for (report, tpv) in zip(ours, oracle) {
                #expect(report.mode.rawValue == tpv.mode)
                #expect(
                    report.location.map { abs($0.latitude - tpv.lat!) < 1e-9 && abs($0.longitude - tpv.lon!) < 1e-9 }
                        ?? (tpv.lat == nil || tpv.mode < 2)
                )
                #expect(
                    report.time.map { Int(($0.timeIntervalSince1970 * 1000).rounded()) % 86_400_000 }
                        == tpv.millisecondsOfDay
                )
            }

            // 2. The manager, unfiltered: one location per gpsd report with a position.
            let everyLocation = everything.elements.compactMap { if case .location(let fix) = $0 { fix } else { nil } }
            #expect(everyLocation.count == located.count)

            // 3. The default filter drops a report with the same time as the last one delivered.
            var lastTime: Int?
            var lastUntimed: GPSDTPV?
            var expected = 0
            for tpv in oracle {
                guard tpv.mode >= 2 else {
                    lastUntimed = nil  // a fix lost and regained is news, wherever it is
                    continue
                }
                guard tpv.lat != nil, tpv.lon != nil else { continue }
                if let time = tpv.millisecondsOfDay {
                    if time == lastTime { continue }
                    lastTime = time
                    lastUntimed = nil
                } else {
                    // Before gpsd knows the date: the same place again is the same fix.
                    if let last = lastUntimed, last.lat == tpv.lat, last.lon == tpv.lon, last.mode == tpv.mode {
                        continue
                    }
                    lastUntimed = tpv
                }
                expected += 1
            }
            await filtered.wait { [expected] in
                $0.count { if case .location = $0 { true } else { false } } >= expected
            }
            await filtered.waitUntilQuiet()
            let filteredLocations = filtered.elements.filter { if case .location = $0 { true } else { false } }
            #expect(filteredLocations.count == expected)

            // 4. The CLI prints the same fixes as the default filter, as JSON lines, and exits 0 on
            // Ctrl-C (once it has printed as many, and nothing more for a while).
            try? await eventually("keepalive watch printed \(expected) fixes") { cliFixCount.withLock { $0 } >= expected }
            try await Task.sleep(for: .milliseconds(300))
            interrupt.fire()
            let printed = try await cli.value
            #expect(printed.exitCode == 0)
            // Compared up to a reconnection after its fixes: gpsd says nothing once the log is fed,
            // so a watch left 10 s (a loaded machine) reconnects, and gpsd's current fix, which
            // it may never have sent as a report, then comes as news (its answer to ?POLL).
            let isFix = { (line: String) in line.hasPrefix("{") && line.contains("\"class\":\"fix\"") }
            let firstFix = printed.lines.firstIndex(where: isFix) ?? printed.lines.endIndex
            let reconnected =
                printed.lines[firstFix...].firstIndex { $0.contains("\"status\":\"connectionLost\"") } ?? printed.lines.endIndex
            let cliFixes = printed.lines[..<reconnected].filter(isFix)
            #expect(
                cliFixes.count == expected,
                "keepalive watch printed:\n\(printed.lines.joined(separator: "\n"))\nthe manager's default filter gave:\n\(filteredLocations)"
            )
            for line in cliFixes.prefix(3) {
                let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                for key in ["latitude", "longitude", "time", "mode", "horizontalAccuracy"] {
                    #expect(object[key] != nil, "\(key)")
                }
            }
            // 5. `locate`, waiting before the first sentence, prints the first fix gpsd reported;
            // for a log without one it is still waiting when the feed is over, and prints nothing.
            if located.isEmpty { stopLocate.fire() }
            let located1 = try await locate.value
            if !located.isEmpty {
                #expect(located1.exitCode == 0)
                let object = try #require(
                    try JSONSerialization.jsonObject(with: Data((located1.lines.first ?? "{}").utf8)) as? [String: Any]
                )
                let latitude = try #require(object["latitude"] as? Double)
                let longitude = try #require(object["longitude"] as? Double)
                // One of gpsd's first fixes (it may connect a sentence late on a loaded machine).
                #expect(
                    located.prefix(3).contains { abs($0.lat! - latitude) < 1e-9 && abs($0.lon! - longitude) < 1e-9 }
                )
            } else {
                #expect(located1.signal == SIGINT, "still waiting when stopped: \(located1.status)")
                #expect(located1.lines.isEmpty, "no fix printed: \(located1.lines)")
            }
            raw.cancel()
            everything.cancel()
            filtered.cancel()
            print(
                "\(log): gpsd TPV \(oracle.count), mode>=2 \(oracle.filter { $0.mode >= 2 }.count), "
                    + "located \(located.count), ours raw \(ours.count), manager \(everyLocation.count), filtered \(filteredLocations.count)"
            )
        }
    }
}
