import Foundation
import LocationKeepAlive
import LocationKeepAliveMocks
import Subprocess
import IntegrationSupport
import Testing

/// `keepalive run` against a real gpsd, driven by signals, its NDJSON read as it comes.
@Suite(.timeLimit(.minutes(3)))
struct RunServiceTests {
    /// Reads events until one matches, for at most `timeout`; returns everything read.
    private func read(
        _ command: RunningCommand,
        until match: @escaping ([String: Any]) -> Bool,
        count: Int = 1,
        timeout: Duration = Tools.patience
    ) async throws -> [[String: Any]] {
        var seen: [[String: Any]] = []
        var matched = 0
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline, let line = try await command.nextLine() {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                continue
            }
            seen.append(object)
            if match(object) {
                matched += 1
                if matched == count { return seen }
            }
        }
        Issue.record("no matching event within \(timeout); read \(seen.count) events, the last: \(seen.suffix(3))")
        return seen
    }

    @Test func pollsWithAlwaysPulsesWithWhenInUseAndStopsCleanly() async throws {
        let keepalive = try Tools.keepalive.path
        let port = try await Tools.freePort()
        let authFile = FileManager.default.temporaryDirectory.appendingPathComponent("run-\(UUID().uuidString).json")
            .path
        defer { try? FileManager.default.removeItem(atPath: authFile) }
        _ = try await runCommand(keepalive, ["auth", "set", "always", "--app", "runtest", "--auth-file", authFile])
        try await withGPSFake(log: NMEAFixture("ublox-8.log").url, port: port) {
            try await waitUntilGPSDAccepts(port: port)
            let (stopTime, status) = try await RunningCommand.run(
                keepalive,
                [
                    "run", "--gpsd", "localhost:\(port)", "--json", "--policy", "ios13", "--budget", "2s",
                    "--interval", "1s", "--pulse", "100ms", "--audio-device", "null", "--app", "runtest",
                    "--auth-file", authFile,
                ]
            ) { command in
                _ = try await read(command, until: { $0["event"] as? String == "started" })
                _ = try await read(command, until: { $0["class"] as? String == "fix" })

                try command.send(.userDefinedOne)  // to the background
                let background = try await read(
                    command,
                    until: { $0["event"] as? String == "poll" && $0["ok"] as? Bool == true },
                    count: 2
                )
                #expect(background.contains { ($0["lifecycle"] as? String) == "did enter background" })
                #expect(
                    background.contains { ($0["decision"] as? String)?.hasPrefix("background task expiring") == true }
                )
                // A poll that fails (no fix within its timeout on a loaded machine) falls back to a
                // pulse; otherwise polls alone keep the app alive.
                var lastPollWorked: Bool?
                var unexplainedPulses = 0
                for event in background {
                    switch event["event"] as? String {
                    case "poll": lastPollWorked = event["ok"] as? Bool == true
                    case "pulse" where lastPollWorked != false: unexplainedPulses += 1
                    default: break
                    }
                }
                #expect(
                    unexplainedPulses == 0,
                    "a pulse only after a failed poll: \(background.filter { ["poll", "pulse"].contains($0["event"] as? String) })"
                )

                _ = try await runCommand(
                    keepalive,
                    ["auth", "set", "when-in-use", "--app", "runtest", "--auth-file", authFile]
                )
                let downgraded = try await read(command, until: { $0["event"] as? String == "pulse" }, count: 2)
                #expect(
                    downgraded.contains {
                        $0["event"] as? String == "authorization" && $0["authorization"] as? String == "when-in-use"
                    }
                )
                let pulses = downgraded.filter { $0["event"] as? String == "pulse" }
                #expect(pulses.allSatisfy { $0["device"] as? String == "ALSA null" && $0["error"] is NSNull })

                try command.send(.userDefinedTwo)  // back to the foreground
                _ = try await read(command, until: { ($0["lifecycle"] as? String) == "did become active" })
                let sent = Date()
                try command.send(.terminate)
                let last = try await read(command, until: { $0["event"] as? String == "stopped" })
                #expect(last.contains { ($0["lifecycle"] as? String) == "will terminate" })
                // From the signal to the service's own stamp on its stopped event.
                return last.last.flatMap(writtenAt).map { Duration.seconds($0.timeIntervalSince(sent)) }
            }
            #expect(status == .exited(0))
            let stopped = try #require(stopTime, "no stamp on the stopped event")
            #expect(stopped < Tools.bound(.seconds(3)), "stopped \(stopped) after SIGTERM")
            print("keepalive run stopped \(stopped) after SIGTERM")
        }
    }

    @Test func aMissingAudioDeviceFallsBackAndSaysSo() async throws {
        let keepalive = try Tools.keepalive.path
        let authFile = FileManager.default.temporaryDirectory.appendingPathComponent("run-\(UUID().uuidString).json")
            .path
        defer { try? FileManager.default.removeItem(atPath: authFile) }
        _ = try await runCommand(
            keepalive,
            ["auth", "set", "when-in-use", "--app", "runtest", "--auth-file", authFile]
        )
        let (_, status) = try await RunningCommand.run(
            keepalive,
            [
                "run", "--replay", NMEAFixture("telit-he910.log").url.path, "--json", "--policy", "ios13",
                "--budget", "2s", "--interval", "1s", "--audio-device", "hw:77,0", "--background", "--app", "runtest",
                "--auth-file", authFile,
            ]
        ) { command in
            let events = try await read(command, until: { $0["event"] as? String == "pulse" }, count: 2)
            let failures = events.filter { $0["event"] as? String == "pulse" }
            #expect(
                failures.allSatisfy { ($0["error"] as? String)?.contains("cannot open audio device 'hw:77,0'") == true }
            )
            #expect(
                events.contains {
                    ($0["decision"] as? String)?.hasPrefix("audio failed: nothing keeps the app alive") == true
                }
            )
            try command.send(.interrupt)
            _ = try await read(command, until: { $0["event"] as? String == "stopped" })
        }
        #expect(status == .exited(0))
    }

    /// The run of the replay issue: polls against a replayed log move along the track, as
    /// polls against a receiver would.
    @Test func pollsAgainstAReplayMoveAlongTheLog() async throws {
        let keepalive = try Tools.keepalive.path
        let authFile = FileManager.default.temporaryDirectory.appendingPathComponent("run-\(UUID().uuidString).json")
            .path
        defer { try? FileManager.default.removeItem(atPath: authFile) }
        _ = try await runCommand(keepalive, ["auth", "set", "always", "--app", "runtest", "--auth-file", authFile])
        let (_, status) = try await RunningCommand.run(
            keepalive,
            [
                "run", "--replay", NMEAFixture("ublox-8.log").url.path, "--speed", "1", "--json", "--policy", "ios13",
                "--budget", "2s", "--interval", "1s", "--audio-device", "null", "--background", "--app", "runtest",
                "--auth-file", authFile,
            ]
        ) { command in
            let events = try await read(
                command,
                until: { $0["event"] as? String == "poll" && $0["ok"] as? Bool == true },
                count: 4
            )
            let polls = events.filter { $0["event"] as? String == "poll" && $0["ok"] as? Bool == true }
            let times = polls.compactMap { $0["fixTime"] as? String }
            let places = Set(polls.compactMap { poll in (poll["latitude"] as? Double).map { "\($0)" } })
            #expect(times.count == 4 && zip(times, times.dropFirst()).allSatisfy { $0 < $1 }, "\(times)")
            #expect(places.count >= 3, "the polls stayed in one place: \(polls)")
            try command.send(.interrupt)
            _ = try await read(command, until: { $0["event"] as? String == "stopped" })
        }
        #expect(status == .exited(0))
    }
}
