import Foundation
import LocationKeepAlive
import LocationKeepAliveMocks
import Subprocess
import IntegrationSupport
import Testing

/// The authorization store with real processes and real file systems.
@Suite(.timeLimit(.minutes(3)))
struct AuthorizationFileTests {
    let folder: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("authz-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    private func keepalive(_ arguments: String...) async throws -> CommandResult {
        try await runCommand(try Tools.keepalive.path, arguments)
    }

    /// Seen through inotify, not by the 30 s re-read: the manager's clock never moves, so its
    /// safety-net poll never runs.
    @Test func aChangeByAnotherProcessIsSeenAtOnceWithoutPolling() async throws {
        let file = folder.appendingPathComponent("tracker.json")
        let authorization = LocationAuthorizationManager(
            application: "tracker",
            file: AuthorizationFile(url: file),
            policyURL: folder.appendingPathComponent("none"),
            clock: ManualClock()
        )
        let changes = Recorder(authorization.changes())
        for status in ["always", "when-in-use", "denied"] {
            let result = try await keepalive("auth", "set", status, "--app", "tracker", "--auth-file", file.path)
            #expect(result.exitCode == 0)
            let written = ContinuousClock.now
            let seen = await changes.wait { $0.last?.status.rawValue == status }
            let delay = ContinuousClock.now - written
            #expect(seen)
            print("authorization change to \(status) seen \(delay) after the writer exited")
        }
        changes.cancel()
    }

    @Test func writersKilledMidWriteNeverLeaveAPartialFile() async throws {
        let file = folder.appendingPathComponent("killed.json")
        let keepalive = try Tools.keepalive.path
        // 150 writers, each killed after 0 to 59 ms: some before, some during, some after writing.
        // Every tenth one is left to finish, so the readers see written files however slowly
        // the machine starts processes (on a loaded CI runner, 60 ms can be before any write).
        let script = """
            killed=0
            for i in $(seq 150); do
                if [ $((i % 2)) -eq 0 ]; then s=always; else s=denied; fi
                "\(keepalive)" auth set $s --app killed --auth-file "\(file.path)" >/dev/null 2>&1 &
                pid=$!
                if [ $((i % 10)) -ne 1 ]; then
                    sleep "$(printf '0.%03d' $((RANDOM % 60)))"
                    kill -9 $pid 2>/dev/null && killed=$((killed + 1))
                fi
                wait $pid 2>/dev/null
            done
            echo "killed $killed"
            """
        let reader = Task {
            var reads = 0
            var damaged = 0
            while !Task.isCancelled {
                do {
                    if try AuthorizationFile(url: file).load() != nil { reads += 1 }
                } catch {
                    damaged += 1
                }
                try? await Task.sleep(for: .milliseconds(1))  // pacing: the file read all along, a thousand times a second
            }
            return (reads, damaged)
        }
        let result = try await runCommand("/bin/bash", ["-c", script], timeout: .seconds(90))
        reader.cancel()
        let (reads, damaged) = await reader.value
        print("\(result.lines.last ?? ""); \(reads) reads, \(damaged) damaged")
        #expect(damaged == 0)
        #expect(reads > 0)
        #expect(try AuthorizationFile(url: file).load()?.status != nil)
        #expect(result.lines.last.map { $0 != "killed 0" } == true, "some writers were killed while running")
    }

    @Test func aReadOnlyFolderIsAClearErrorAndTheOldStatusStays() async throws {
        let mount = folder.appendingPathComponent("ro")
        try FileManager.default.createDirectory(at: mount, withIntermediateDirectories: true)
        let file = mount.appendingPathComponent("app.json")
        let asRoot = getuid() == 0
        if asRoot {
            // Root writes through permission bits: use a file system that is really read-only.
            #expect(
                try await runCommand("/bin/mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", mount.path]).exitCode == 0
            )
        }
        defer {
            if asRoot { _ = try? FileManager.default.removeItem(at: file) }
        }
        #expect(
            try await keepalive("auth", "set", "when-in-use", "--app", "ro", "--auth-file", file.path).exitCode == 0
        )
        if asRoot {
            #expect(try await runCommand("/bin/mount", ["-o", "remount,ro", mount.path]).exitCode == 0)
        } else {
            try FileManager.default.setAttributes([.posixPermissions: 0o500], ofItemAtPath: mount.path)
        }
        let result = try await keepalive("auth", "set", "always", "--app", "ro", "--auth-file", file.path)
        #expect(result.exitCode == 1)
        #expect(result.error.contains("cannot save authorization file \(file.path)"))
        #expect(result.error.contains("writable"))
        let status = try await keepalive("auth", "status", "--app", "ro", "--auth-file", file.path)
        #expect(status.lines.first == "ro: when-in-use, full accuracy")
        if asRoot { _ = try await runCommand("/bin/umount", [mount.path]) }
    }

    @Test func theCLIManagesTheStore() async throws {
        let file = folder.appendingPathComponent("cli.json").path
        let status = try await keepalive("auth", "status", "--app", "cli", "--auth-file", file, "--json")
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(status.lines.joined().utf8)) as? [String: Any]
        )
        #expect(object["status"] as? String == "not-determined")
        #expect(object["file"] as? String == file)

        let unanswered = try await keepalive("auth", "request", "always", "--app", "cli", "--auth-file", file)
        #expect(unanswered.exitCode == 1)
        #expect(unanswered.error.contains("nobody answered the location prompt"))

        #expect(
            try await keepalive(
                "auth",
                "request",
                "when-in-use",
                "--answer",
                "when-in-use",
                "--app",
                "cli",
                "--auth-file",
                file
            ).lines == ["cli: when-in-use"]
        )
        #expect(
            try await keepalive("auth", "request", "always", "--answer", "always", "--app", "cli", "--auth-file", file)
                .lines == ["cli: always"]
        )
        #expect(
            try await keepalive("auth", "set", "denied", "--app", "cli", "--auth-file", file).lines == ["cli: denied"]
        )
        #expect(
            try await keepalive("auth", "request", "always", "--answer", "always", "--app", "cli", "--auth-file", file)
                .lines == ["cli: denied"]
        )
        #expect(
            try await keepalive("auth", "reset", "--app", "cli", "--auth-file", file).lines == ["cli: not-determined"]
        )
        #expect(!FileManager.default.fileExists(atPath: file))
        #expect(try await keepalive("auth", "set", "restricted", "--app", "cli", "--auth-file", file).exitCode == 64)
    }

    @Test func watchWithAnAppEnforcesItsAuthorization() async throws {
        let file = folder.appendingPathComponent("watch.json").path
        let log = NMEAFixture.mt3339.url.path
        let refused = try await keepalive(
            "watch",
            "--replay",
            log,
            "--speed",
            "0",
            "--app",
            "watch",
            "--auth-file",
            file
        )
        #expect(refused.exitCode == 1)
        #expect(refused.error.contains("location is not-determined for watch"))
        _ = try await keepalive("auth", "set", "always", "--accuracy", "reduced", "--app", "watch", "--auth-file", file)
        let allowed = try await keepalive(
            "watch",
            "--replay",
            log,
            "--speed",
            "0",
            "--json",
            "--app",
            "watch",
            "--auth-file",
            file
        )
        #expect(allowed.exitCode == 0)
        let fixes = allowed.lines.filter { $0.contains("\"class\":\"fix\"") }
        #expect(fixes.count == 30)
        #expect(fixes.first?.contains("\"latitude\":44.07") == true, "reduced accuracy: rounded to 0.01 degree")
    }

    @Test func aFullDiskIsAClearErrorAndTheOldFileStays() async throws {
        guard getuid() == 0 else {
            Issue.record("needs root to mount a 16 KB tmpfs (CI runs as root); run the suite with sudo")
            return
        }
        let mount = folder.appendingPathComponent("full")
        try FileManager.default.createDirectory(at: mount, withIntermediateDirectories: true)
        #expect(
            try await runCommand("/bin/mount", ["-t", "tmpfs", "-o", "size=16k", "tmpfs", mount.path]).exitCode == 0
        )
        defer { _ = try? FileManager.default.removeItem(at: mount.appendingPathComponent("filler")) }
        let file = mount.appendingPathComponent("app.json")
        #expect(
            try await keepalive("auth", "set", "when-in-use", "--app", "full", "--auth-file", file.path).exitCode == 0
        )
        let before = try Data(contentsOf: file)
        // Fill what is left, to the last block.
        _ = try await runCommand("/bin/dd", ["if=/dev/zero", "of=\(mount.path)/filler", "bs=1024"])
        let result = try await keepalive("auth", "set", "always", "--app", "full", "--auth-file", file.path)
        #expect(result.exitCode == 1)
        #expect(result.error.contains("cannot save authorization file \(file.path)"), "\(result.error)")
        #expect(result.error.lowercased().contains("no space left on device"), "\(result.error)")
        #expect(try Data(contentsOf: file) == before, "the old file is untouched")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: mount.path).filter { $0.contains(".tmp-") }
        #expect(leftovers.isEmpty, "no temporary file left behind: \(leftovers)")
        let status = try await keepalive("auth", "status", "--app", "full", "--auth-file", file.path)
        #expect(status.lines.first == "full: when-in-use, full accuracy")
        _ = try await runCommand("/bin/umount", [mount.path])
    }

    @Test(arguments: ["garbage {", #"{"version":1,"locationServicesEnabled":"yes"}"#, ""])
    func aDamagedPolicyTurnsServicesOffAndSaysWhy(policy: String) async throws {
        let policyFile = folder.appendingPathComponent("policy-\(UUID().uuidString).json")
        try Data(policy.utf8).write(to: policyFile)
        let file = folder.appendingPathComponent("app.json")
        _ = try await keepalive("auth", "set", "always", "--app", "pol", "--auth-file", file.path)
        let status = try await keepalive(
            "auth",
            "status",
            "--json",
            "--app",
            "pol",
            "--auth-file",
            file.path,
            "--policy-file",
            policyFile.path
        )
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(status.lines.joined().utf8)) as? [String: Any]
        )
        #expect(object["locationServicesEnabled"] as? Bool == false, "the safer reading")
        #expect((object["problem"] as? String)?.contains(policyFile.path) == true, "\(object)")
    }

    @Test func theServiceRunsOnWithADamagedFileAsNotDetermined() async throws {
        let file = folder.appendingPathComponent("damaged.json")
        let damaged = Data(#"{"version":1,"application":"dmg","status":"alw"#.utf8)
        try damaged.write(to: file)
        let (lines, status) = try await RunningCommand.run(
            try Tools.keepalive.path,
            [
                "run", "--replay", NMEAFixture("telit-he910.log").url.path, "--json", "--background", "--policy",
                "ios13", "--budget", "1s", "--interval", "1s", "--audio-device", "null", "--app", "dmg",
                "--auth-file", file.path,
            ]
        ) { command in
            var lines: [String] = []
            while lines.filter({ $0.contains(#""event":"pulse""#) }).count < 2, let line = try await command.nextLine()
            {
                lines.append(line)
            }
            try command.send(.terminate)
            return lines
        }
        let events = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(status == .exited(0))
        let started = events.first { $0["event"] as? String == "started" }
        #expect(started?["authorization"] as? String == "not-determined", "\(String(describing: started))")
        #expect(
            lines.contains { $0.contains(file.path) && $0.contains("error") },
            "the problem names the file: \(lines)"
        )
        #expect(events.filter { $0["event"] as? String == "pulse" }.count == 2, "kept alive by audio, still running")
        #expect(try Data(contentsOf: file) == damaged, "never overwritten")
    }
}
