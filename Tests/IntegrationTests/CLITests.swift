import Foundation
import LocationKeepAlive
import LocationKeepAliveMocks
import IntegrationSupport
import Testing

/// The built `keepalive` binary, end to end: output, exit codes, messages.
@Suite(.timeLimit(.minutes(3)))
struct CLITests {
    private func keepalive(_ arguments: String...) async throws -> CommandResult {
        try await runCommand(try Tools.keepalive.path, arguments)
    }

    @Test func watchReplaysALogAsJSONLinesAndStopsAtItsEnd() async throws {
        let result = try await keepalive("watch", "--replay", NMEAFixture.mt3339.url.path, "--speed", "0", "--json")
        #expect(result.exitCode == 0)
        let objects = try result.lines.map {
            try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        let fixes = objects.filter { $0["class"] as? String == "fix" }
        #expect(fixes.count == 30)
        #expect(fixes.first?["time"] as? String == "2015-04-13T20:26:40.000Z")
        #expect(fixes.first?["mode"] as? Int == 3)
        #expect(
            fixes.allSatisfy {
                $0["latitude"] is Double && $0["longitude"] is Double && $0["horizontalAccuracy"] is Double
            }
        )
        #expect(objects.last?["status"] as? String == "replayFinished")
    }

    /// `--replay -` reads standard input, and a FIFO is read as it is written, in pieces.
    @Test func watchReplaysStandardInputAndAFIFO() async throws {
        let keepalive = try Tools.keepalive.path
        let log = NMEAFixture.mt3339.url.path
        let piped = try await runCommand(
            "/bin/sh",
            ["-c", "cat '\(log)' '\(log)' | '\(keepalive)' watch --replay - --speed 0 --json"]
        )
        #expect(piped.exitCode == 0)
        #expect(piped.lines.filter { $0.contains("\"class\":\"fix\"") }.count == 60)
        #expect(piped.lines.last?.contains("276 sentences, 60 reports") == true)

        let fifo = FileManager.default.temporaryDirectory.appendingPathComponent("replay-\(UUID().uuidString).fifo").path
        defer { try? FileManager.default.removeItem(atPath: fifo) }
        // The writer sends the log 100 bytes every 10 ms: lines arrive cut anywhere.
        let script = """
            mkfifo '\(fifo)' && (python3 -c "
            import sys, time
            data = open('\(log)', 'rb').read()
            out = open('\(fifo)', 'wb', buffering=0)
            for i in range(0, len(data), 100):
                out.write(data[i:i + 100]); time.sleep(0.01)
            " &) && '\(keepalive)' watch --replay '\(fifo)' --speed 0 --json
            """
        let fromFIFO = try await runCommand("/bin/sh", ["-c", script])
        #expect(fromFIFO.exitCode == 0)
        #expect(fromFIFO.lines.filter { $0.contains("\"class\":\"fix\"") }.count == 30)
    }

    @Test func replayRefusalsSayTheRealReason() async throws {
        let directory = try await keepalive("watch", "--replay", "/tmp")
        #expect(directory.exitCode == 64)
        #expect(directory.error.contains("/tmp is a directory"))
        let missing = try await keepalive("watch", "--replay", "/no/such.nmea")
        #expect(missing.exitCode == 64)
        #expect(missing.error.contains("no such file or directory"))
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("closed-\(UUID().uuidString).nmea")
        try Data("$GPZDA,202640.000,13,04,2015,,*54\n".utf8).write(to: log)
        defer { try? FileManager.default.removeItem(at: log) }
        try FileManager.default.setAttributes([.posixPermissions: 0], ofItemAtPath: log.path)
        let closed = try await runCommand(
            "/usr/sbin/runuser",
            ["-u", "nobody", "--", try Tools.keepalive.path, "watch", "--replay", log.path]
        )
        if getuid() == 0 {  // as another user, a file only root may read
            #expect(closed.exitCode == 1)
            #expect(closed.error.contains("cannot read NMEA log \(log.path): permission denied"))
        }
        let null = try await keepalive("watch", "--replay", "/dev/null", "--speed", "0", "--json")
        #expect(null.exitCode == 0)
        #expect(null.lines.last?.contains("0 sentences, 0 reports") == true)
        let loop = try await runCommand(
            "/bin/sh",
            ["-c", "echo | '\(try Tools.keepalive.path)' watch --replay - --loop"]
        )
        #expect(loop.exitCode == 1)
        #expect(loop.error.contains("can loop only from a file it can read again"))
    }

    /// `keepalive help` and the documentation stay in step: every command the parser knows is in
    /// the tool's article, and the article names no command the parser does not know.
    @Test func everyCommandIsDocumented() async throws {
        let dump = try await keepalive("--experimental-dump-help")
        let tool = try #require(
            try JSONSerialization.jsonObject(with: Data(dump.lines.joined(separator: "\n").utf8)) as? [String: Any]
        )
        let command = try #require(tool["command"] as? [String: Any])
        let names = (command["subcommands"] as? [[String: Any]] ?? []).compactMap { $0["commandName"] as? String }
        #expect(names.count >= 9)
        let article = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(
                "Sources/LocationKeepAlive/LocationKeepAlive.docc/CommandLineTool.md"
            )
        let text = try String(contentsOf: article, encoding: .utf8)
        for name in names {
            #expect(text.contains("| `keepalive \(name)` |"), "\(name) is missing from CommandLineTool.md")
        }
        let documented = text.split(separator: "\n").filter { $0.hasPrefix("| `keepalive ") }.compactMap {
            $0.dropFirst(13).split(separator: "`").first.map(String.init)
        }
        #expect(Set(documented) == Set(names))
        let version = try await keepalive("--version")
        #expect(version.lines == [PackageVersion.current])
    }

    @Test func runsHelpListsEveryDestinationOption() async throws {
        let help = try await keepalive("run", "--help").lines.joined(separator: "\n")
        for option in Destination.optionNames {
            #expect(help.contains(" \(option)="), "keepalive run --help does not name \(option)=")
        }
        for scheme in ["mqtt[s]://", "owntracks+http[s]://", "traccar+http[s]://"] {
            #expect(help.contains(scheme))
        }
    }

    @Test func watchHumanLinesApplyTheFilters() async throws {
        let all = try await keepalive("watch", "--replay", NMEAFixture("haicom-305N.log").url.path, "--speed", "0")
        let spaced = try await keepalive(
            "watch",
            "--replay",
            NMEAFixture("haicom-305N.log").url.path,
            "--speed",
            "0",
            "--distance",
            "5"
        )
        let fixLines = { (result: CommandResult) in result.lines.filter { !$0.hasPrefix("#") }.count }
        #expect(fixLines(all) == 67)
        #expect(fixLines(spaced) > 0 && fixLines(spaced) < fixLines(all))
    }

    /// Natively, on every bundled log: `watch` prints the decoder's fixes, `locate` the first of them.
    @Test(arguments: NMEAFixture.all)
    func watchAndLocateWorkOnEveryLog(log: NMEAFixture) async throws {
        let watch = try await keepalive("watch", "--replay", log.url.path, "--speed", "0", "--json")
        #expect(watch.exitCode == 0)
        let fixes = watch.lines.filter { $0.contains("\"class\":\"fix\"") }
        let locate = try await keepalive("locate", "--replay", log.url.path, "--speed", "0", "--json")
        if let first = fixes.first {
            #expect(locate.exitCode == 0)
            #expect(locate.lines == [first])
        } else {
            #expect(locate.exitCode == 1)
            #expect(locate.error.contains("no fix met the request") || locate.error.contains("before a fix met"))
        }
    }

    @Test func simulatePrintsOneJSONObjectWithNullsForWhatDidNotHappen() async throws {
        let result = try await keepalive("simulate", "--strategy", "audio-loop", "--duration", "1h", "--json")
        #expect(result.exitCode == 0)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(result.lines.joined().utf8)) as? [String: Any]
        )
        #expect(object["survived"] as? Bool == true)
        #expect(object["suspendedAt"] is NSNull && object["terminatedAt"] is NSNull)
        #expect(object["audioSeconds"] as? Double == 3600)
        for key in ["locationPolls", "audioPulses", "wakeups", "suspensions"] { #expect(object[key] != nil, "\(key)") }
    }

    @Test func simulateFollowsAScriptAndTraces() async throws {
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("script-\(UUID().uuidString)")
        try "0 background\n10s foreground\n1m background\n".write(to: script, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: script) }
        let result = try await keepalive(
            "simulate",
            "--strategy",
            "background-task",
            "--duration",
            "5m",
            "--script",
            script.path,
            "--trace"
        )
        #expect(result.exitCode == 0)
        #expect(result.lines.contains { $0.contains("60.000") && $0.contains("did enter background") })
        #expect(result.lines.contains("suspended at 90.0 s after entering the background: background time expired"))
    }

    @Test func aBadScriptLineIsNamed() async throws {
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("script-\(UUID().uuidString)")
        try "0 background\nlater foreground\n".write(to: script, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: script) }
        let result = try await keepalive("simulate", "--script", script.path)
        #expect(result.exitCode == 64)
        #expect(result.error.contains("script line 2"))
    }

    @Test func locatePrintsOneFix() async throws {
        let result = try await keepalive("locate", "--replay", NMEAFixture.mt3339.url.path, "--speed", "0", "--json")
        #expect(result.exitCode == 0)
        #expect(result.lines.count == 1)
        #expect(result.lines.first?.contains("\"latitude\":44.06884") == true)
    }

    /// Ages on a replay are the log's own: a fix of 2015 is fresh at that moment of the log.
    @Test func locateWithAMaximumAgeIsAnsweredByAReplay() async throws {
        let result = try await keepalive(
            "locate", "--replay", NMEAFixture.mt3339.url.path, "--speed", "0", "--max-age", "5", "--json"
        )
        #expect(result.exitCode == 0, "\(result.error)")
        #expect(result.lines.first?.contains("\"latitude\":44.06884") == true)
    }

    @Test func locateWithoutAFixFailsWithAMessage() async throws {
        let result = try await keepalive("locate", "--replay", NMEAFixture("ublox-lea-5q.log").url.path, "--speed", "0")
        #expect(result.exitCode == 1)
        #expect(result.error.contains("before a fix met the request"))
    }

    @Test func locateWithoutGPSDFailsFastNamingTheAddress() async throws {
        let port = try await Tools.freePort()
        // The refusal ends it, not its 10-minute timeout: a command still waiting after the test's
        // patience is killed, and a killed command has no exit code.
        let result = try await keepalive("locate", "--gpsd", "127.0.0.1:\(port)", "--timeout", "600")
        #expect(result.exitCode == 1)
        #expect(result.error.contains("127.0.0.1:\(port)") && result.error.contains("Start it"))
    }

    @Test(arguments: [
        ["watch", "--bogus"],
        ["locate", "--timeout", "0"],
        ["locate", "--timeout", "abc"],
        ["watch", "--gpsd", "localhost:99999"],
        ["watch", "--gpsd", ":2947"],
        ["watch", "--speed=-1", "--replay", "/dev/null"],
        ["watch", "--accuracy", "0"],
        ["watch", "--distance=-3"],
        ["watch", "--max-age", "nan"],
        ["watch", "--replay", "/nonexistent.nmea"],
        ["watch", "--count", "0"],
        ["watch", "--loop"],
        ["frobnicate"],
        ["simulate", "--profile", "ios9"],
        ["simulate", "--auth", "sometimes"],
        ["simulate", "--strategy", "prayer"],
        ["simulate", "--duration", "forever"],
        ["simulate", "--modes", "audio,telepathy"],
        ["simulate", "--script", "/nonexistent.script"],
        ["simulate", "--budget", "0s"],
        ["simulate", "--benchmark", "0"],
        ["simulate", "--interval", "-1s"],
        ["locate", "--gpsd", "localhost:0"],
        ["locate", "--gpsd", "host:port:extra"],
        ["locate", "--accuracy", "-5"],
        ["locate", "--speed", "fast", "--replay", "/dev/null"],
        ["watch", "--count", "-2"],
        ["watch", "--count", "many"],
        ["watch", "--max-age", "-1s"],
        ["run", "--policy", "ios9"],
        ["run", "--budget", "-5s"],
        ["run", "--budget", "soon"],
        ["run", "--strategy", "prayer"],
        ["run", "--interval", "0s"],
        ["run", "--interval", "1s", "--pulse", "2s"],
        ["run", "--pulse", "loud"],
        ["run", "--callback-interval", "0"],
        ["run", "--modes", "telepathy"],
        ["run", "--audio-device", ""],
        ["run", "--gpsd", "localhost:70000"],
        ["auth"],
        ["auth", "frobnicate"],
        ["auth", "set"],
        ["auth", "set", "sometimes"],
        ["auth", "set", "always", "--app", ""],
        ["auth", "request", "always", "--answer", "maybe"],
        ["auth", "request", "sometimes", "--answer", "always"],
        ["auth", "status", "--auth-file", ""],
        ["host", "--freezer", "ice"],
        ["host", "--policy", "windows"],
        ["host", "--mode", "999"],
        ["host", "--notice-timeout", "soon"],
        ["host", "--name", "a/b"],
        ["host", "launch", "--app", "x"],
        ["host", "launch", "--app", "x", "--modes", "telepathy", "--", "true"],
        ["host", "status", "--socket", ""],
        ["run", "--host-socket", "/tmp/x.sock"],
        ["simulate", "--fix-latency", "-1s"],
        // Checked by the journal commands.
        ["export", "--format", "kml"],
        ["export", "--from", "yesterday"],
        ["run", "--deliver", "nameless"],
        ["upload", "--batch-threshold", "0"],
        ["journal", "retry"],
        ["run", "--journal", "/tmp/j.sqlite", "--durability", "eventually"],
        ["run", "--journal", "/tmp/j.sqlite", "--commit-interval", "0s"],
        ["run", "--journal", "/tmp/j.sqlite", "--commit-interval", "2h"],
        ["run", "--journal", "/tmp/j.sqlite", "--keep-fixes", "0"],
        ["upload", "--journal", "/tmp/j.sqlite", "--keep-for", "a while"],
    ])
    func badArgumentsExit64WithAMessage(arguments: [String]) async throws {
        let result = try await runCommand(try Tools.keepalive.path, arguments)
        #expect(result.exitCode == 64)
        #expect(result.error.contains("Error:"))
    }

    /// Every command that takes --deliver, with a secret in the URL: refused, and the secret
    /// in none of what it printed (the refusal, the usage, any log line).
    @Test(arguments: ["run", "upload"])
    func aRefusedDestinationNeverShowsItsSecret(command: String) async throws {
        let journal = FileManager.default.temporaryDirectory.appendingPathComponent("secret-\(UUID().uuidString).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: journal) }
        for url in [
            "mqtt://u:hunter2@localhost/owntracks/me/phone", "owntracks+http://u:hunter2@h:8083/pub",
            "mqtt://u:hunter2@", "mqtt://h/owntracks/me/phone?password=hunter2",
        ] {
            var arguments = [command, "--journal", journal, "--deliver", "home=\(url)"]
            if command == "run" { arguments += ["--replay", NMEAFixture("ublox-8.log").url.path] }
            let result = try await runCommand(try Tools.keepalive.path, arguments)
            let printed = (result.lines + [result.error]).joined(separator: "\n")
            #expect(result.exitCode == 64, "\(printed)")
            #expect(printed.contains("password in the URL"), "\(printed)")
            #expect(!printed.contains("hunter2"), "\(printed)")
        }
    }
}
