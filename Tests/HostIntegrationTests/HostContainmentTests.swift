import Foundation
import Glibc
import LocationKeepAlive
import IntegrationSupport
import Testing

/// The host contains its apps: they run as an unprivileged user with no way back to root,
/// cannot leave their group, and one that does anyway is found, reported and killed; status
/// says only what the kernel says. Real processes, root (as CI runs), `nobody` as the app's user.
@Suite(.timeLimit(.minutes(3)), .serialized)
struct HostContainmentTests {
    static let nobody: UInt32 = 65534

    /// A folder every user may write to, removed at the end.
    final class SharedFolder {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("shared-\(UUID().uuidString.prefix(8))").path
        init() throws {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            chmod(path, 0o1777)
        }
        func file(_ name: String) -> String { "\(path)/\(name)" }
        func read(_ name: String) -> String? { try? String(contentsOfFile: file(name), encoding: .utf8) }
        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    /// A harness whose host runs apps of other users only as the issue allows: never as root.
    private func strictHarness(_ freezer: FreezerKind, _ adjust: @escaping (inout AppHost.Configuration) -> Void = { _ in })
        async throws -> HostHarness
    {
        try await HostHarness(freezer: freezer, profile: HostScenarioTests.profile) { configuration in
            configuration.allowsRootApps = false
            adjust(&configuration)
        }
    }

    @Test(arguments: [FreezerKind.cgroup2, .cgroup1])
    func anUnprivilegedAppCannotLeaveItsGroupAndIsFrozenAtTheBudget(freezer: FreezerKind) async throws {
        let harness = try await strictHarness(freezer)
        let shared = try SharedFolder()
        let heartbeat = Heartbeat()
        defer { heartbeat.remove() }
        let hierarchyRoot = URL(fileURLWithPath: try #require(harness.host.freezer.root)).deletingLastPathComponent().path
        try await harness.launch(
            "esc",
            user: "nobody",
            taskApp(escapingTo: hierarchyRoot, beat: heartbeat.path, report: shared.file("escape"))
        )
        try await waitUntil(timeout: .seconds(10)) { shared.read("escape") != nil && heartbeat.count >= 3 }
        #expect(shared.read("escape") == "Permission denied", "the write to \(hierarchyRoot)/cgroup.procs")
        let running = try await harness.status("esc")
        #expect(running.user == "nobody" && running.escaped == nil)

        let backgroundAt = ContinuousClock.now
        try await harness.move(.background, "esc")
        let frozen = try #require(
            await harness.firstEvent(after: backgroundAt, within: .seconds(10)) { $0.frozenApp == "esc" }
        )
        let budget = try #require(HostScenarioTests.profile.backgroundBudget)
        let late = backgroundAt.duration(to: frozen.at) - budget
        #expect(late > .milliseconds(-50) && late < HostScenarioTests.tolerance, "frozen \(late) after the budget's end")
        let beats = heartbeat.count
        let cpu = try await harness.status("esc").cpu
        try await Task.sleep(for: .milliseconds(800))
        let status = try await harness.status("esc")
        #expect(status.state == "suspended" && status.frozen && status.escaped == nil)
        #expect(heartbeat.count <= beats + 1, "the heartbeat went on while frozen")
        #expect(status.cpu - cpu < 0.005, "the frozen app used \(status.cpu - cpu) s of CPU")
        print("containment \(freezer): the escape said \(shared.read("escape") ?? ""); frozen \(late) after the budget")
        await harness.stop()
    }

    @Test func aRootCallerMustNameAnUnprivilegedUserWhoGetsNoPrivilegeBack() async throws {
        let harness = try await strictHarness(.cgroup2)
        let shared = try SharedFolder()
        let unnamed = await #expect(throws: HostError.self) { try await harness.launch("x", user: nil, ["true"]) }
        #expect(unnamed?.message.contains("apps never run as root: name the user the app runs as") == true)
        let root = await #expect(throws: HostError.self) { try await harness.launch("x", user: "root", ["true"]) }
        #expect(root?.message.contains("start the host with --allow-root-apps") == true)
        #expect(await (try? harness.status("x")) == nil, "nothing launched")

        // A setuid-root copy of id: run as nobody without the host's care, it is root.
        let helper = shared.file("setuid-id")
        // Copied by cp: a copy this process wrote could not be run while another child of it was
        // between its fork and its exec ("Text file busy").
        #expect(runToEnd("/bin/cp", ["/usr/bin/id", helper]) == 0)
        chmod(helper, 0o4755)
        let unconfined = try await asNobody([helper, "-u"])
        #expect(unconfined.lines == ["0"], "the control: a setuid helper gives uid 0 to a plain nobody")

        // A descriptor of the host's process that is not close-on-exec: the app must not get it.
        let leaked = open("/dev/null", O_RDONLY)  // inherited-ok: the descriptor the app must not get
        defer { close(leaked) }
        try await harness.launch(
            "plain",
            output: shared.file("output"),
            user: "nobody",
            [
                "/bin/sh", "-c",
                "id -u > $0/uid; $1 -u > $0/setuid; grep -E '^(Cap|NoNewPrivs)' /proc/self/status > $0/status; "
                    + "ls /proc/self/fd > $0/fds; echo done > $0/done",
                shared.path, helper,
            ]
        )
        try await waitUntil(timeout: .seconds(10)) { shared.read("done") != nil }
        #expect(shared.read("uid") == "65534\n")
        #expect(shared.read("setuid") == "65534\n", "the setuid helper inside the app stays nobody")
        let capabilities = (shared.read("status") ?? "").split(separator: "\n")
        #expect(capabilities.count == 6)
        for line in capabilities {
            let value = line.split(whereSeparator: { $0 == "\t" || $0 == " " }).last ?? ""
            #expect(line.hasPrefix("NoNewPrivs") ? value == "1" : value == "0000000000000000", "\(line)")
        }
        let descriptors = (shared.read("fds") ?? "").split(separator: "\n").compactMap { Int32($0) }
        #expect(Set(descriptors).isSubset(of: [0, 1, 2, 3]), "inherited descriptors: \(descriptors)")
        #expect(!descriptors.contains(leaked) || leaked <= 3)
        let status = try await harness.status("plain")
        #expect(status.user == "nobody")
        await harness.stop()
    }

    @Test func withSignalsAppsOfOtherUsersAreRefusedUnlessAskedFor() async throws {
        let harness = try await strictHarness(.signal)
        let refused = await #expect(throws: HostError.self) { try await harness.launch("x", user: "nobody", ["true"]) }
        #expect(refused?.message.contains("outside the app can thaw it (SIGCONT)") == true)
        #expect(refused?.message.contains("--signal-other-users") == true)
        await harness.stop()

        let allowed = try await strictHarness(.signal) { $0.allowsSignalsForOtherUsers = true }
        let pid = try await allowed.launch("x", user: "nobody", ["sleep", "30"])
        #expect(pid > 0)
        #expect(try await allowed.status("x").user == "nobody")
        await allowed.stop()
    }

    @Test func aMemberOfTheSocketsGroupLaunchesOnlyAsItself() async throws {
        let harness = try await strictHarness(.cgroup2) {
            $0.socketMode = 0o660
            $0.socketGroup = "nogroup"
        }
        let shared = try SharedFolder()
        let answers = shared.file("answers")
        let requests = [
            #"{"op": "launch", "app": "theirs", "user": "root", "command": ["true"]}"#,
            #"{"op": "launch", "app": "mine", "command": ["sleep", "30"]}"#,
        ]
        let client = try await asNobody(rawClient(socket: harness.socket, sending: requests, answersTo: answers))
        #expect(client.exitCode == 0, "\(client.error)")
        let lines = (shared.read("answers") ?? "").split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.first?.contains("only root may start an app as another user: you are nobody") == true)
        #expect(lines.last?.contains(#""ok":true"#) == true)
        #expect(try await harness.status("mine").user == "nobody")
        await harness.stop()
    }

    @Test func aStrangerIsRefusedByTheSocketAndByTheHost() async throws {
        let harness = try await strictHarness(.cgroup2) {
            $0.socketMode = 0o660
            $0.socketGroup = "root"
        }
        let shared = try SharedFolder()
        let request = [#"{"op": "launch", "app": "intruder", "command": ["true"]}"#]

        let byTheSocket = try await asNobody(rawClient(socket: harness.socket, sending: request, answersTo: shared.file("one")))
        #expect(byTheSocket.exitCode != 0 && byTheSocket.error.contains("PermissionError"), "\(byTheSocket.error)")

        // Widened by hand, the socket lets the stranger connect: the host still refuses it.
        chmod(harness.socket, 0o666)
        _ = try await asNobody(rawClient(socket: harness.socket, sending: request, answersTo: shared.file("two")))
        let answer = shared.read("two") ?? ""
        #expect(answer.contains("uid 65534 may not use this host: its socket admits uid 0 and group root only"))
        #expect(await (try? harness.status("intruder")) == nil)
        await harness.stop()
    }

    /// A root app can move itself out of its cgroup. (With signals, what leaves the session is
    /// still followed and frozen: `HostileAppTests`.)
    @Test(arguments: [FreezerKind.cgroup2, .cgroup1])
    func anAppThatLeavesItsGroupAnywayIsFoundReportedAndKilled(freezer: FreezerKind) async throws {
        let harness = try await HostHarness(freezer: freezer, profile: HostScenarioTests.profile)  // root apps allowed
        let heartbeat = Heartbeat()
        defer { heartbeat.remove() }
        let root = try #require(harness.host.freezer.root)
        let hierarchy = URL(fileURLWithPath: root).deletingLastPathComponent().path
        let escape = "echo $$ > \(hierarchy)/cgroup.procs; \(heartbeat.loop)"
        let pid = try await harness.launch("esc", user: "root", ["sh", "-c", escape])
        try await heartbeat.waitForBeats(3)

        // Statuses all along, as a user would watch it: never frozen while the escaped process runs.
        let statuses = Locked<[HostAppStatus]>([])
        let watching = Task {
            while !Task.isCancelled {
                if let status = try? await harness.status("esc") { statuses.withLock { $0.append(status) } }
                try? await Task.sleep(for: .milliseconds(5))  // pacing: a status every 5 ms, as a user would watch it
            }
        }
        let backgroundAt = ContinuousClock.now
        try await harness.move(.background, "esc")
        let escaped = try #require(
            await harness.firstEvent(after: backgroundAt, within: .seconds(10)) {
                if case .escaped(let app, _) = $0 { app == "esc" } else { false }
            }
        )
        let suspended = try #require(
            harness.all.first {
                if case .lifecycle("esc", .suspended) = $0.event { true } else { false }
            }
        )
        let detection = suspended.at.duration(to: escaped.at)
        #expect(detection < Tools.bound(.seconds(1)), "found \(detection) after it was suspended")
        #expect(await harness.firstEvent(after: backgroundAt, within: .seconds(10)) { $0.killedApp == "esc" } != nil)
        #expect(!harness.all.contains { $0.event.frozenApp == "esc" }, "a freeze was reported")
        let beats = heartbeat.count
        try await Task.sleep(for: .milliseconds(500))
        #expect(heartbeat.count <= beats + 1, "the escaped heartbeat went on")
        watching.cancel()
        _ = await watching.value

        let status = try await harness.status("esc")
        #expect(status.state == "not running" && !status.frozen)
        let where_ = freezer == .cgroup1 ? "freezer cgroup /" : "cgroup /"
        #expect(status.escaped?.contains { $0.contains("left its group for \(where_)") } == true, "\(status.escaped ?? [])")
        #expect(status.reason?.contains("killed: process") == true)
        #expect(status.escaped?.first?.hasPrefix("process \(pid) (sh)") == true)
        #expect(!statuses.withLock { $0 }.contains { $0.frozen }, "status said frozen while the app ran")
        print("containment \(freezer): found and killed \(detection) after it was suspended: \(status.escaped ?? [])")
        await harness.stop()
    }

    @Test func whileFrozenTheKernelsEventsBringTheCheckBack() async throws {
        let harness = try await HostHarness(freezer: .cgroup2, profile: HostScenarioTests.profile)
        let heartbeat = Heartbeat()
        defer { heartbeat.remove() }
        let group = try #require(harness.host.freezer.root).appending("/beat")
        let hierarchy = URL(fileURLWithPath: try #require(harness.host.freezer.root)).deletingLastPathComponent().path
        try await harness.launch("beat", user: "root", ["sh", "-c", heartbeat.loop])
        try await heartbeat.waitForBeats(3)

        // Thawed behind the host's back: said, and frozen again.
        var start = ContinuousClock.now
        try await harness.move(.background, "beat")
        _ = try #require(await harness.firstEvent(after: start, within: .seconds(10)) { $0.frozenApp == "beat" })
        let thawedAt = ContinuousClock.now
        try "0".write(toFile: "\(group)/cgroup.freeze", atomically: false, encoding: .utf8)
        let refrozen = try #require(
            await harness.firstEvent(after: thawedAt, within: .seconds(5)) {
                if case .error(let message) = $0 { message.contains("thawed by something other than the host") } else { false }
            }
        )
        try await waitUntil(timeout: .seconds(5)) {
            ((try? String(contentsOfFile: "\(group)/cgroup.events", encoding: .utf8)) ?? "").contains("frozen 1")
        }
        #expect(try await harness.status("beat").frozen)

        // Every process taken out of the frozen group (as an escaped helper would): the group's
        // `populated` changes, and the check finds them where they went.
        let members = try String(contentsOfFile: "\(group)/cgroup.procs", encoding: .utf8).split(separator: "\n")
        start = ContinuousClock.now
        for pid in members { try String(pid).write(toFile: "\(hierarchy)/cgroup.procs", atomically: false, encoding: .utf8) }
        let escaped = try #require(
            await harness.firstEvent(after: start, within: .seconds(5)) {
                if case .escaped("beat", _) = $0 { true } else { false }
            }
        )
        #expect(start.duration(to: escaped.at) < Tools.bound(.seconds(1)))
        _ = try #require(await harness.firstEvent(after: start, within: .seconds(5)) { $0.killedApp == "beat" })
        let beats = heartbeat.count
        try await Task.sleep(for: .milliseconds(500))
        #expect(heartbeat.count <= beats + 1, "the processes taken out went on")
        print(
            "containment while frozen: thawed by hand, said \(thawedAt.duration(to: refrozen.at)) later; "
                + "taken out, found \(start.duration(to: escaped.at)) later"
        )
        await harness.stop()
    }

    @Test func theHostStopsAnAppThatLeftItsGroupWhenItStops() async throws {
        let harness = try await HostHarness(freezer: .cgroup2, profile: HostScenarioTests.profile)
        let heartbeat = Heartbeat()
        defer { heartbeat.remove() }
        let hierarchy = URL(fileURLWithPath: try #require(harness.host.freezer.root)).deletingLastPathComponent().path
        let pid = try await harness.launch("esc", user: "root", ["sh", "-c", "echo $$ > \(hierarchy)/cgroup.procs; \(heartbeat.loop)"])
        try await heartbeat.waitForBeats(3)
        #expect(ProcFSProbe.cgroup(of: pid) == "/", "it left")
        await harness.stop()  // in the foreground all along: never frozen, never checked until now
        let beats = heartbeat.count
        try await Task.sleep(for: .milliseconds(500))
        #expect(heartbeat.count <= beats + 1, "the escaped app outlived its host")
        #expect(kill(pid, 0) != 0, "process \(pid) still exists")
    }

    /// A Python app that tries to move itself to `root`'s cgroup.procs (writing what happened to
    /// `report`), beats every 100 ms, and under the host holds a background task from entering
    /// the background to its expiry warning, answering every notice.
    private func taskApp(escapingTo root: String, beat: String, report: String) -> [String] {
        let script = """
            import json, os, socket, sys, threading, time
            root, beat, report = sys.argv[1:4]
            try:
                with open(root + "/cgroup.procs", "w") as f: f.write(str(os.getpid()))
                result = "moved"
            except OSError as e:
                result = e.strerror
            with open(report, "w") as f: f.write(result)
            def beats():
                while True:
                    with open(beat, "a") as f: f.write("%d\\n" % time.time_ns())
                    time.sleep(0.1)
            threading.Thread(target=beats, daemon=True).start()
            s = socket.socket(socket.AF_UNIX); s.connect(os.environ["KEEPALIVE_HOST_SOCKET"]); f = s.makefile("rw")
            def send(o): f.write(json.dumps(o) + "\\n"); f.flush()
            send({"op": "hello", "app": os.environ["KEEPALIVE_APP"]})
            for line in f:
                m = json.loads(line)
                if m.get("notice") == "lifecycle" and m.get("event") == "background":
                    send({"op": "begin-task", "task": 1, "name": "upload"}); send({"op": "ack", "notice": "background"})
                elif m.get("notice") == "expiring":
                    send({"op": "end-task", "task": 1})
                elif m.get("notice") == "will-suspend":
                    send({"op": "ack", "notice": "will-suspend"})
            """
        return ["/usr/bin/python3", "-c", script, root, beat, report]
    }

    /// Runs `command` as `nobody` (no groups), outside the host: a plain process of another user.
    private func asNobody(_ command: [String]) async throws -> CommandResult {
        try await runCommand(
            "/usr/bin/setpriv",
            ["--reuid=\(Self.nobody)", "--regid=\(Self.nobody)", "--clear-groups"] + command
        )
    }

    /// A client outside every app: sends each request to `socket`, writes each reply to `answers`.
    private func rawClient(socket: String, sending requests: [String], answersTo answers: String) -> [String] {
        let script = """
            import json, socket, sys
            s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); f = s.makefile("rw")
            out = open(sys.argv[2], "w")
            for i, text in enumerate(sys.argv[3:]):
                o = json.loads(text); o["id"] = i + 1
                f.write(json.dumps(o) + "\\n"); f.flush()
                out.write(f.readline()); out.flush()
            """
        return ["/usr/bin/python3", "-c", script, socket, answers] + requests
    }
}

/// The v2 cgroup of a process, read as a test reads it.
enum ProcFSProbe {
    static func cgroup(of pid: Int32) -> String? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/cgroup", encoding: .utf8) else { return nil }
        return text.split(separator: "\n").first { $0.hasPrefix("0::") }.map { String($0.dropFirst(3)) }
    }
}
