import Foundation
import LocationKeepAlive
import Subprocess
import IntegrationSupport
import Testing

/// `keepalive run --config FILE` and `keepalive host --config FILE` (keepalive.conf(5)): the
/// file's section before the command line, which overrides it; a bad file refused at the start
/// with its file, line and reason (exit 78); SIGHUP reads it again, and a bad reload keeps the
/// running settings.
@Suite(.timeLimit(.minutes(3)))
struct ConfigurationFileTests {
    let folder: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("config-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    /// Writes a configuration file of mode 0644 and returns its path.
    private func file(_ text: String, mode: Int = 0o644, name: String = "keepalive.conf") throws -> String {
        let path = folder.appendingPathComponent(name).path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
        return path
    }

    private var replayLog: String { Tools.repository.appendingPathComponent("Mocks/Fixtures/agreement/chart-plotter.log").path }

    /// The first JSON line of `lines` with `event` equal to `name`.
    private func event(_ name: String, in lines: [String]) -> [String: Any]? {
        Self.objects(lines).first { $0["event"] as? String == name }
    }

    private static func objects(_ lines: [String]) -> [[String: Any]] {
        lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    // MARK: Refused at the start: the file, the line and the reason.

    @Test(arguments: [
        ("[run]\ngpsd = localhost:2947\nfoo = 1\n", 3, "unknown setting 'foo' in [run]: keepalive run has no --foo"),
        ("# a comment\n[run]\n\nspeed = fast\n", 4, "speed: The value 'fast' is invalid for '--speed <speed>'"),
        ("[run]\nstrategy = hybrid\nmode = move\n", 3, "mode: --mode goes with --strategy monitoring"),
        ("[run]\ngpsd = a:1\n\ngpsd = b:2\n", 4, "'gpsd' is set again (first on line 2)"),
        ("gpsd = localhost:2947\n[run]\n", 1, "'gpsd' comes before any section: put it under [run] or [host]"),
        ("[run]\n[daemon]\n", 2, "no section [daemon]: the sections are [run] and [host]"),
        ("[run]\nbackground = maybe\n", 2, "'background' is true or false, not 'maybe'"),
        ("[run]\njust words\n", 2, "a setting is 'key = value', not 'just words'"),
        ("[run]\nconfig = /etc/other.conf\n", 2, "unknown setting 'config'"),
        ("[run]\nreplay =\n", 2, "'replay' needs a value"),
        ("[host]\nfreezer = cgroup3\n[run]\n", 2, "freezer: The value 'cgroup3' is invalid for '--freezer <freezer>'"),
    ])
    func aBadFileIsRefusedNamingItsLineAndWhy(text: String, line: Int, reason: String) async throws {
        let path = try file(text)
        // The [host] case is refused by the command that reads [host]; every other by run.
        let command = text.contains("[host]") ? ["host", "--config", path] : ["run", "--config", path, "--replay", replayLog]
        let result = try await runCommand(try Tools.keepalive.path, command)
        #expect(result.exitCode == 78, "exit \(String(describing: result.exitCode)): \(result.error)")
        #expect(result.error.contains("keepalive: \(path):\(line): \(reason)"), "stderr: \(result.error)")
        #expect(result.lines.isEmpty, "it started anyway: \(result.lines.prefix(2))")
    }

    @Test func aFileOthersMayChangeOrNoFileAtAllIsRefused() async throws {
        let writable = try file("[run]\n", mode: 0o666)
        let refused = try await runCommand(try Tools.keepalive.path, ["run", "--config", writable, "--replay", replayLog])
        #expect(refused.exitCode == 78)
        #expect(refused.error.contains("\(writable): other users may change it (mode 666)"), "\(refused.error)")
        #expect(refused.error.contains("chmod go-w \(writable)"))

        let missing = folder.appendingPathComponent("absent.conf").path
        let absent = try await runCommand(try Tools.keepalive.path, ["run", "--config=\(missing)"])
        #expect(absent.exitCode == 78)
        #expect(absent.error.contains("\(missing): cannot read it: No such file or directory"), "\(absent.error)")
    }

    // MARK: The file's settings, and the command line over them.

    @Test func theFilesSettingsApplyAndTheCommandLineOverridesThem() async throws {
        let path = try file(
            """
            # keepalive.service's settings
            [run]
            replay = \(replayLog)
            speed = 0
            strategy = audio-loop
            policy = ios13
            audio-device = null
            json = true
            background = true

            [host]
            freezer = signal
            """
        )
        let fromFile = try await linesToTheEnd(["run", "--config", path])
        let started = try #require(event("started", in: fromFile))
        #expect(started["strategy"] as? String == "audio-loop")
        #expect(started["profile"] as? String == "ios13")
        #expect(entersBackground(fromFile), "the file's background = true")

        let overridden = try await linesToTheEnd(["run", "--config", path, "--strategy", "none", "--policy=unlimited", "--no-background"])
        let restarted = try #require(event("started", in: overridden))
        #expect(restarted["strategy"] as? String == "none")
        #expect(restarted["profile"] as? String == "unlimited")
        #expect(!entersBackground(overridden), "--no-background overrides the file's background = true")

        // A flag's --no- form is not a setting of its own: the file says FLAG = false.
        let inverted = try await runCommand(try Tools.keepalive.path, ["run", "--config", try file("[run]\nno-background = true\n", name: "inverted.conf")])
        #expect(inverted.exitCode == 78)
        #expect(inverted.error.contains("inverted.conf:2: unknown setting 'no-background'"), "\(inverted.error)")
    }

    private func entersBackground(_ lines: [String]) -> Bool {
        lines.contains { $0.contains(#""lifecycle":"did enter background""#) }
    }

    /// Starts `keepalive ARGUMENTS`, reads to its `started` line, stops it (SIGTERM) and reads
    /// to the end: every line.
    private func linesToTheEnd(_ arguments: [String]) async throws -> [String] {
        let (lines, status) = try await RunningCommand.run(try Tools.keepalive.path, arguments) { command in
            var lines: [String] = []
            while let line = try await command.nextLine() {
                lines.append(line)
                if line.contains(#""event":"started""#) { break }
            }
            try command.send(.terminate)
            while let line = try await command.nextLine() { lines.append(line) }
            return lines
        }
        #expect(status == .exited(0))
        return lines
    }

    /// Starts `keepalive ARGUMENTS`, reads to its `started` line, stops it: that line.
    private func startedEvent(_ arguments: [String]) async throws -> [String: Any]? {
        event("started", in: try await linesToTheEnd(arguments))
    }

    // MARK: SIGHUP.

    @Test func runReadsTheFileAgainOnSIGHUPAndRestartsInPlaceOnlyWhenItChangedAndIsGood() async throws {
        let settings = """
            [run]
            replay = \(replayLog)
            loop = true
            speed = 5
            audio-device = null
            json = true
            strategy = audio-loop
            """
        let path = try file(settings)
        let (lines, status) = try await RunningCommand.run(try Tools.keepalive.path, ["run", "--config", path]) { command in
            var events: [[String: Any]] = []
            var lines: [String] = []
            func read(until match: ([String: Any]) -> Bool) async throws {
                while let line = try await command.nextLine() {
                    guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { continue }
                    if object["class"] as? String == "fix" { continue }
                    events.append(object)
                    lines.append(line)
                    if match(object) { return }
                }
                Issue.record("the output ended; read \(events.suffix(3))")
            }
            try await read { $0["event"] as? String == "started" }
            try command.send(Signal(rawValue: SIGHUP))
            try await read { $0["event"] as? String == "reload" }
            _ = try file(settings.replacingOccurrences(of: "audio-loop", with: "none"))
            try command.send(Signal(rawValue: SIGHUP))
            try await read { $0["event"] as? String == "started" }
            _ = try file(settings + "\n\nspeed = 2\n")
            try command.send(Signal(rawValue: SIGHUP))
            try await read { $0["event"] as? String == "reload" }
            try command.send(.terminate)
            try await read { $0["event"] as? String == "stopped" }
            return lines
        }
        let events = Self.objects(lines)
        #expect(status == .exited(0), "a refused reload must leave it running, and SIGTERM stop it cleanly")
        let reloads = events.filter { $0["event"] as? String == "reload" }
        let outcomes: [String?] = reloads.map { $0["outcome"] as? String }
        let messages: [String] = reloads.map { $0["message"] as? String ?? "" }
        #expect(outcomes == ["unchanged", "restarting", "refused"])
        #expect(messages.last?.contains("\(path):9: 'speed' is set again (first on line 4)") == true, "\(messages)")
        #expect(messages.last?.contains("the running settings stay") == true)
        #expect(messages.dropFirst().first?.hasPrefix("strategy changed") == true, "\(messages)")
        let strategies: [String?] = events.filter { $0["event"] as? String == "started" }.map { $0["strategy"] as? String }
        #expect(strategies == ["audio-loop", "none"], "the restart in place took the file's new strategy")
        // The restart's new image wrote on the same output: the same process, not a child.
        #expect(events.filter { $0["event"] as? String == "stopped" }.count == 2)
    }

    @Test func theHostAppliesWhatItCanOnSIGHUPNamesWhatWaitsForARestartAndRefusesABadFile() async throws {
        let socket = folder.appendingPathComponent("host.sock").path
        let settings = """
            [host]
            freezer = signal
            event-budget = 10s
            monitors = \(folder.appendingPathComponent("monitors").path)
            json = true
            """
        let path = try file(settings)
        let (reloadLines, status) = try await RunningCommand.run(
            try Tools.keepalive.path,
            ["host", "--config", path, "--socket", socket]
        ) { command in
            var reloads: [String] = []
            func read(_ event: String) async throws {
                while let line = try await command.nextLine() {
                    guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { continue }
                    if object["event"] as? String == "reload" { reloads.append(line) }
                    if object["event"] as? String == event { return }
                }
                Issue.record("the host's output ended before \(event)")
            }
            try await read("started")
            _ = try file(settings.replacingOccurrences(of: "10s", with: "20s") + "\nname = keepalive.elsewhere\n")
            try command.send(Signal(rawValue: SIGHUP))
            try await read("reload")
            _ = try file(settings + "\n\nevent-budget = 0s\n")
            try command.send(Signal(rawValue: SIGHUP))
            try await read("reload")
            let status = try await runCommand(try Tools.keepalive.path, ["host", "status", "--socket", socket])
            #expect(status.exitCode == 0, "the host stopped answering after the reloads: \(status.error)")
            try command.send(.terminate)
            try await read("stopped")
            return reloads
        }
        let reloads = Self.objects(reloadLines)
        #expect(status == .exited(0))
        let outcomes: [String?] = reloads.map { $0["outcome"] as? String }
        #expect(outcomes == ["applied", "refused"])
        let applied = try #require(reloads.first?["message"] as? String)
        #expect(applied.contains("applied event-budget (to apps launched from now on)"), "\(applied)")
        #expect(applied.contains("name take effect at the next restart"), "\(applied)")
        let refused = reloads.last?["message"] as? String ?? ""
        #expect(refused.contains("\(path):7: 'event-budget' is set again (first on line 3)"), "\(refused)")
    }

    // MARK: The shipped file and its manual.

    @Test func theShippedFileStartsBothCommands() async throws {
        let shipped = Tools.repository.appendingPathComponent("config/keepalive.conf").path
        let journal = folder.appendingPathComponent("journal.sqlite").path
        let run = try #require(
            try await startedEvent([
                "run", "--config", shipped, "--replay", replayLog, "--journal", journal,
                "--auth-file", folder.appendingPathComponent("auth.json").path,
            ])
        )
        #expect(run["strategy"] as? String == "hybrid")
        let host = try await RunningCommand.run(
            try Tools.keepalive.path,
            [
                "host", "--config", shipped, "--socket", folder.appendingPathComponent("h.sock").path, "--freezer", "signal",
                "--monitors", folder.appendingPathComponent("monitors").path,
            ]
        ) { command in
            var started = false
            while !started, let line = try await command.nextLine() { started = line.contains(#""event":"started""#) }
            try command.send(.terminate)
            return started
        }
        #expect(host.value, "the host never said it started")
        #expect(host.status == .exited(0))
    }

    private func keysOf(_ arguments: [[String: Any]]) -> Set<String> {
        Set(arguments.compactMap { (($0["names"] as? [[String: String]]) ?? []).first { $0["kind"] == "long" }?["name"] })
    }

    /// keepalive.conf(5) has an entry for every setting of both sections, so a new option is
    /// documented there or this fails.
    @Test(arguments: [["run"], ["host", "serve"]])
    func theManualDescribesEverySetting(command: [String]) async throws {
        let manual = try String(contentsOf: Tools.repository.appendingPathComponent("man/keepalive.conf.5"), encoding: .utf8)
        let dump = try await runCommand(try Tools.keepalive.path, command + ["--experimental-dump-help"])
        let tool = try #require(try JSONSerialization.jsonObject(with: Data(dump.lines.joined().utf8)) as? [String: Any])
        let arguments = try #require((tool["command"] as? [String: Any])?["arguments"] as? [[String: Any]])
        let keys = arguments.compactMap { argument -> String? in
            guard argument["shouldDisplay"] as? Bool != false else { return nil }
            let names = argument["names"] as? [[String: String]] ?? []
            return names.first { $0["kind"] == "long" }?["name"]
        }
        // A flag's --no- form is set in the file as FLAG = false: the flag's entry covers it.
        .filter { !["config", "help", "version"].contains($0) && !($0.hasPrefix("no-") && keysOf(arguments).contains(String($0.dropFirst(3)))) }
        #expect(keys.count > 20)
        let section = command[0] == "run" ? "[run] SETTINGS" : "[host] SETTINGS"
        let body = try #require(manual.range(of: ".SH \"\(section)\"")).upperBound
        let text = manual[body...].prefix { _ in true }.components(separatedBy: "\n.SH ").first ?? ""
        for key in keys {
            let roff = key.replacingOccurrences(of: "-", with: "\\-")
            #expect(
                text.contains(".BI \(roff) ") || text.contains(".B \(roff)\n"),
                "keepalive.conf(5) has no entry for \(key) under \(section)"
            )
        }
    }
}
