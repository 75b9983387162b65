import Foundation
import LocationKeepAlive
import LocationKeepAliveMocks
import Subprocess
import IntegrationSupport
import TestWaiting
import Testing

/// SIGTERM and SIGINT while the tool waits on something: a reconnect backoff, a location poll,
/// a silent pulse. Each stops cleanly at once (tens of milliseconds here; asserted under 3 s, less
/// than what it interrupts: a 4 s backoff, a 5 s pulse, a poll's timeout), exit 0, its output
/// complete; a second SIGINT exits at once.
///
/// The time to stop runs from the signal to the tool's own stamp on its last line, so a test
/// process busy with other tests reads it late without making it longer.
@Suite(.timeLimit(.minutes(3)))
struct SignalTests {
    /// Reads JSON lines until one matches; returns every line read.
    private func read(_ command: RunningCommand, until match: ([String: Any]) -> Bool) async throws -> [[String: Any]] {
        var seen: [[String: Any]] = []
        while let line = try await command.nextLine() {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                continue
            }
            seen.append(object)
            if match(object) { return seen }
        }
        Issue.record("the output ended before a match; read \(seen.suffix(3))")
        return seen
    }

    /// Sends `signal` (twice, `gap` apart, when asked) and reads to the end: how long the tool
    /// took, from the signal to its own stamp on its last line (a second SIGINT leaves none: nil).
    private func stop(
        _ command: RunningCommand,
        with signal: Signal,
        twice gap: Duration? = nil
    ) async throws -> (Duration?, [String]) {
        let sent = Date()
        try command.send(signal)
        if let gap {
            try await Task.sleep(for: gap)
            try? command.send(signal)
        }
        var rest: [String] = []
        while let line = try await command.nextLine() { rest.append(line) }
        let stopped = rest.last(where: isStoppedLine).flatMap(writtenAt)
        return (stopped.map { .seconds($0.timeIntervalSince(sent)) }, rest)
    }

    private func authFile(_ status: String) async throws -> String {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("signal-\(UUID().uuidString).json")
            .path
        _ = try await runCommand(
            try Tools.keepalive.path,
            ["auth", "set", status, "--app", "signals", "--auth-file", file]
        )
        return file
    }

    @Test func watchStopsAtOnceDuringAReconnectBackoff() async throws {
        let gpsd = try MockGPSD(scripts: [[.tpv(latitude: 52, longitude: 4, time: Date()), .stall]])
        defer { gpsd.stop() }
        let ((elapsed, rest), status) = try await RunningCommand.run(
            try Tools.keepalive.path,
            ["watch", "--gpsd", "127.0.0.1:\(gpsd.port)", "--json"]
        ) { command in
            _ = try await read(command) { $0["class"] as? String == "fix" }
            gpsd.stop()  // gone: every attempt is refused, the backoff grows
            // The fifth attempt waits 4 s: stop at its start, which a stop that waits it out misses.
            _ = try await read(command) { ($0["message"] as? String)?.contains("attempt 5") == true }
            return try await stop(command, with: .terminate)
        }
        #expect(status == .exited(0))
        let stopTime = try #require(elapsed, "no stopped line: \(rest.suffix(2))")
        #expect(stopTime < Tools.bound(.seconds(3)), "stopped in \(stopTime)")
        #expect(rest.allSatisfy { !$0.contains("\"class\":\"fix\"") })
        print("watch stopped \(stopTime) after SIGTERM in a reconnect backoff")
    }

    /// `keepalive run` polling a gpsd that connects and never reports (so the poll waits):
    /// stopped by `signal` (twice when asked) once a poll has begun.
    private func stopRunDuringAPoll(
        with signal: Signal,
        twice gap: Duration? = nil
    ) async throws -> (Duration?, [String], TerminationStatus) {
        let gpsd = try MockGPSD(scripts: [[.stall]])
        defer { gpsd.stop() }
        let file = try await authFile("always")
        defer { try? FileManager.default.removeItem(atPath: file) }
        let ((elapsed, rest), status) = try await RunningCommand.run(
            try Tools.keepalive.path,
            [
                "run", "--gpsd", "127.0.0.1:\(gpsd.port)", "--json", "--background", "--policy", "ios13",
                "--budget", "1s", "--audio-device", "null", "--app", "signals", "--auth-file", file,
            ]
        ) { command in
            _ = try await read(command) { ($0["decision"] as? String)?.hasPrefix("tick: location poll") == true }
            try await Task.sleep(for: .milliseconds(300))
            return try await stop(command, with: signal, twice: gap)
        }
        return (elapsed, rest, status)
    }

    @Test func runStopsAtOnceDuringALocationPoll() async throws {
        let (elapsed, rest, status) = try await stopRunDuringAPoll(with: .terminate)
        #expect(status == .exited(0))
        #expect(rest.last.map(isStoppedLine) == true, "the last line is flushed: \(rest.suffix(2))")
        let stopTime = try #require(elapsed)
        #expect(stopTime < Tools.bound(.seconds(3)), "stopped in \(stopTime)")
        print("run stopped \(stopTime) after SIGTERM during a poll")
    }

    @Test func runStopsAtOnceInTheMiddleOfAPulse() async throws {
        let file = try await authFile("when-in-use")
        defer { try? FileManager.default.removeItem(atPath: file) }
        let ((elapsed, rest), status) = try await RunningCommand.run(
            try Tools.keepalive.path,
            [
                "run", "--replay", NMEAFixture("telit-he910.log").url.path, "--json", "--background", "--policy",
                "ios13",
                "--budget", "1s", "--pulse", "5s", "--interval", "10s", "--audio-device", "null", "--app", "signals",
                "--auth-file", file,
            ]
        ) { command in
            _ = try await read(command) { ($0["decision"] as? String)?.hasPrefix("tick: silent pulse") == true }
            try await Task.sleep(for: .milliseconds(300))
            return try await stop(command, with: .interrupt)
        }
        #expect(status == .exited(0))
        #expect(rest.last.map(isStoppedLine) == true, "the last line is flushed: \(rest.suffix(2))")
        let stopTime = try #require(elapsed)
        #expect(stopTime < Tools.bound(.seconds(3)), "stopped in \(stopTime)")
        print("run stopped \(stopTime) after SIGINT mid-pulse")
    }

    /// Exit 130 at once, or 0 when the first stop was over before the second came; either way
    /// without waiting for what the first stop waits for (a stop that hung would meet the
    /// suite's time limit).
    @Test func aSecondInterruptExitsAtOnce() async throws {
        let (_, _, status) = try await stopRunDuringAPoll(with: .interrupt, twice: .milliseconds(5))
        #expect(status == .exited(0) || status == .exited(130), "\(status)")
    }

    /// A stop that comes while the command starts (here: at once once it opened its input, a
    /// FIFO) is kept, not lost: exit 0, every time. Before the signals were trapped first, such
    /// a SIGTERM either ended the process by the default action or was taken by the escape
    /// hatch alone, and `run` went on for ever.
    @Test(arguments: ["watch", "run"])
    func aStopDuringStartUpIsKept(command: String) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("startup-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let auth = try await authFile("always")
        defer { try? FileManager.default.removeItem(atPath: auth) }
        for round in 1...10 {
            let fifo = "\(folder)/input-\(round).nmea"
            #expect(mkfifo(fifo, 0o600) == 0)
            var arguments = [command, "--replay", fifo]
            if command == "run" { arguments += ["--audio-device", "null", "--app", "signals", "--auth-file", auth] }
            let process = Process()
            process.executableURL = try Tools.keepalive
            process.arguments = arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            // The writer's open succeeds once the command has opened the FIFO to read; the writer
            // stays open, so the log never ends by itself.
            // Tried every millisecond on a thread of its own: the SIGTERM comes moments after.
            let writer = await onOwnThread { () -> Int32 in
                let deadline = ContinuousClock.now + TestTime.patience
                while ContinuousClock.now < deadline {
                    let writer = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
                    if writer >= 0 { return writer }
                    usleep(1_000)
                }
                return -1
            }
            defer { if writer >= 0 { close(writer) } }
            try #require(writer >= 0, "keepalive \(command) never opened its input")
            process.terminate()
            if await !process.ended(within: Tools.patience) {
                kill(process.processIdentifier, SIGKILL)
                Issue.record("round \(round): keepalive \(command) lost the SIGTERM that came during its start-up")
            }
            guard await process.ended() else {
                Issue.record("round \(round): keepalive \(command) still runs 30 s after SIGKILL")
                continue
            }
            #expect(
                process.terminationReason == .exit && process.terminationStatus == 0,
                "round \(round): keepalive \(command) ended by \(process.terminationReason == .exit ? "exit" : "signal") \(process.terminationStatus)"
            )
        }
    }
}
