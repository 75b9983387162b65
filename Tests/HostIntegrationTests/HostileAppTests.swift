import Foundation
import Glibc
import LocationKeepAlive
import LocationKeepAliveMocks
import IntegrationSupport
import TestWaiting
import Testing

/// The host against apps and local users that mean it harm, each attack a real process: a
/// flood of idle and slow connections from another user, an app that hoards connections and
/// is frozen, a cgroup and fork bomb, a push storm, an orphan that leaves its session, a host
/// that restarts, and apps that spy on each other. Every process and group made is removed.
@Suite(.timeLimit(.minutes(4)), .serialized)
struct HostileAppTests {
    static let nobody: UInt32 = 65534
    /// A region around the boat log's first fix: satisfied from the log's start.
    static let start = #"{"start": {"type": "circle", "latitude": 52.850157, "longitude": 5.313620, "radius": 60}}"#

    /// Runs `program` with `arguments` in the background, as `nobody` when asked; killed by the caller.
    static func spawn(_ arguments: [String], asNobody: Bool) throws -> pid_t {
        let command = asNobody
            ? ["/usr/bin/setpriv", "--reuid=\(nobody)", "--regid=\(nobody)", "--clear-groups"] + arguments
            : arguments
        return try HostCrashTests.startHost(command[0], Array(command.dropFirst()))
    }

    static func end(_ pid: pid_t) { signalAndReap(pid) }

    /// Threads of this process (the in-process host's among them).
    static var threads: Int {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        return status.split(separator: "\n").first { $0.hasPrefix("Threads:") }.flatMap { Int($0.split(separator: "\t").last ?? "") } ?? 0
    }

    /// How long `status` takes to answer, the slowest of `count`.
    static func slowestStatus(_ harness: HostHarness, app: String, count: Int = 20) async throws -> Duration {
        var slowest = Duration.zero
        for _ in 0..<count {
            let start = ContinuousClock.now
            _ = try await harness.status(app)
            slowest = max(slowest, start.duration(to: .now))
            try await Task.sleep(for: .milliseconds(20))  // pacing: a status every 20 ms
        }
        return slowest
    }

    /// A client of another user that opens `count` connections to `socket` and holds them,
    /// every other one sending a request a byte a second; writes how many it opened to `ready`.
    static func flood(socket: String, ready: String, count: Int) -> [String] {
        ["/usr/bin/python3", Tools.repository.appendingPathComponent("Benchmarks/clients/flood_client.py").path, socket, "\(count)", ready]
    }

    @Test func aThousandIdleAndSlowConnectionsOfAnotherUserHoldUpNobody() async throws {
        let harness = try await HostHarness(freezer: .cgroup2, profile: HostScenarioTests.profile)
        let shared = try HostContainmentTests.SharedFolder()
        let log = harness.directory.appendingPathComponent("good.answers").path
        try await harness.launch("before", ["sleep", "600"])
        let threadsBefore = Self.threads
        let ready = shared.file("ready")
        let flood = try Self.spawn(
            Self.flood(socket: harness.host.configuration.appSocket.path, ready: ready, count: 1_000),
            asNobody: true
        )
        defer { Self.end(flood) }
        try await waitUntil(timeout: .seconds(60)) { shared.read("ready") == "1000" }

        let slowest = try await Self.slowestStatus(harness, app: "before")
        #expect(slowest < Tools.bound(.seconds(1)), "status took \(slowest) beside 1,000 hostile connections")
        // Another app is launched, says hello and begins a task: answered.
        try await harness.launch(
            "good",
            rawProtocolApp(
                sending: [#"{"op": "hello", "app": "$APP"}"#, #"{"op": "begin-task", "task": 1, "name": "sync"}"#],
                answersTo: log
            )
        )
        let replies = try await answers(in: log, count: 2)
        #expect(replies.allSatisfy { $0.contains(#""ok":true"#) }, "\(replies)")
        let terminated = ContinuousClock.now
        try await harness.move(.terminate, "before")
        #expect(terminated.duration(to: .now) < Tools.bound(.seconds(1)))
        // Refused beyond the user's share, said once and counted; no thread per connection.
        #expect(harness.all.contains {
            if case .refused(let why) = $0.event { why.contains("uid 65534 has 32 connections open to the host outside every app") } else { false }
        })
        let threadsDuring = Self.threads
        #expect(threadsDuring < threadsBefore + 20, "\(threadsBefore) threads before the flood, \(threadsDuring) during it")
        print("hostile flood: status answered within \(slowest) beside 1,000 connections; threads \(threadsBefore) -> \(threadsDuring)")
        await harness.stop()
    }

    /// An app that opens 30 connections to the host and is then frozen with them.
    static func hoarder() -> [String] {
        ["/usr/bin/python3", Tools.repository.appendingPathComponent("Benchmarks/clients/hoarder_app.py").path, "30"]
    }

    @Test(arguments: HostScenarioTests.freezers)
    func aFrozenAppsConnectionsCountAgainstItAlone(freezer: FreezerKind) async throws {
        let harness = try await HostHarness(freezer: freezer, profile: HostScenarioTests.profile)
        let start = ContinuousClock.now
        try await harness.launch("hog", Self.hoarder())
        _ = try #require(await harness.firstEvent(after: start, within: .seconds(10)) {
            if case .refused(let why) = $0 { why.contains("app hog has 8 connections open to the host") } else { false }
        })
        try await harness.move(.background, "hog")
        _ = try #require(await harness.firstEvent(after: start, within: .seconds(10)) { $0.frozenApp == "hog" })

        let log = harness.directory.appendingPathComponent("good.answers").path
        try await harness.launch(
            "good",
            rawProtocolApp(sending: [#"{"op": "hello", "app": "$APP"}"#, #"{"op": "audio", "active": false}"#], answersTo: log)
        )
        #expect(try await answers(in: log, count: 2).allSatisfy { $0.contains(#""ok":true"#) })
        let moved = ContinuousClock.now
        try await harness.move(.background, "good")
        #expect(moved.duration(to: .now) < Tools.bound(.seconds(2)), "background answered in \(moved.duration(to: .now))")
        let slowest = try await Self.slowestStatus(harness, app: "good")
        #expect(slowest < Tools.bound(.seconds(1)))
        #expect(try await harness.status("hog").frozen)
        await harness.stop()
    }

    @Test func aCgroupAndForkBombIsHeldToItsGroupsLimitsAndTheHostAnswers() async throws {
        let harness = try await HostHarness(freezer: .cgroup2, profile: HostScenarioTests.profile)
        let shared = try HostContainmentTests.SharedFolder()
        let script = """
            import os, sys, time
            base = "/sys/fs/cgroup/unified" + open("/proc/self/cgroup").read().split("0::")[1].strip()
            deep, path = 0, base
            for i in range(10):
                path += "/d"
                try: os.mkdir(path); deep += 1
                except OSError: break
            made = 0
            for i in range(3000):
                try: os.mkdir("%s/g%d" % (base, i)); made += 1
                except OSError: pass
            forks, children = 0, []
            for i in range(700):
                try: pid = os.fork()
                except OSError: break
                if pid == 0:
                    time.sleep(60); os._exit(0)
                children.append(pid); forks += 1
            # Written whole, then named: the test never reads a file that is half written.
            open(sys.argv[1] + ".part", "w").write("%d %d %d" % (deep, made, forks))
            os.rename(sys.argv[1] + ".part", sys.argv[1])
            time.sleep(600)
            """
        let result = shared.file("bomb")
        try await harness.launch("bomb", user: "nobody", ["/usr/bin/python3", "-c", script, result])
        try await waitUntil(timeout: .seconds(60)) { shared.read("bomb") != nil }
        let report = shared.read("bomb") ?? ""
        let numbers = report.split(separator: " ").compactMap { Int($0) }
        let limits = harness.host.freezer.limits
        try #require(numbers.count == 3, "the bomb reported \"\(report)\"")
        #expect(numbers[0] == limits.depth, "groups nested \(numbers[0]) deep")
        #expect(numbers[0] + numbers[1] == limits.groups, "made \(numbers[0] + numbers[1]) groups")
        #expect(numbers[2] < limits.processes && numbers[2] > limits.processes / 2, "forked \(numbers[2])")
        let slowest = try await Self.slowestStatus(harness, app: "bomb", count: 5)
        #expect(slowest < Tools.bound(.seconds(1)), "status took \(slowest)")
        // Killing it and removing its groups holds up nothing else.
        let terminated = ContinuousClock.now
        try await harness.move(.terminate, "bomb")
        _ = try await harness.status("bomb")
        #expect(terminated.duration(to: .now) < Tools.bound(.seconds(1)))
        let folder = try #require(harness.host.freezer.root) + "/bomb"
        try await waitUntil(timeout: .seconds(20)) { access(folder, F_OK) != 0 }
        print("hostile bomb: \(numbers[0]) deep, \(numbers[0] + numbers[1]) groups, \(numbers[2]) processes; status within \(slowest)")
        await harness.stop()
    }

    /// An app that names a datagram socket at `path` for wake-on-data and beats into `beats`
    /// every 100 ms while it runs (monotonic time, bytes read), as `scripts/bench-hostile` runs it.
    static func pushed(path: String, beats: String) -> [String] {
        ["/usr/bin/python3", Tools.repository.appendingPathComponent("Benchmarks/clients/pushed_app.py").path, path, beats]
    }

    @Test func aPushStormIsHeldToTheWakeBudgetAndAnotherAppsPushStillWakesIt() async throws {
        var profile = HostScenarioTests.profile
        profile.eventBudget = .seconds(1)
        let harness = try await HostHarness(freezer: .cgroup2, profile: profile)
        let storm = (socket: harness.directory.appendingPathComponent("storm.sock").path, beats: harness.directory.appendingPathComponent("storm.beats").path)
        let quiet = (socket: harness.directory.appendingPathComponent("quiet.sock").path, beats: harness.directory.appendingPathComponent("quiet.beats").path)
        let start = ContinuousClock.now
        for (app, files) in [("storm", storm), ("quiet", quiet)] {
            try await harness.launch(app, Self.pushed(path: files.socket, beats: files.beats))
            try await waitUntil(timeout: .seconds(10)) { FileManager.default.fileExists(atPath: files.beats) }
            try await harness.move(.background, app)
            _ = try #require(await harness.firstEvent(after: start, within: .seconds(10)) { $0.frozenApp == app })
        }
        let sender = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(sender) }
        // Without waiting: a frozen app's datagram queue fills (10 datagrams), and a blocking
        // send would then wait for the app to read.
        func push(_ path: String) {
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in raw.copyBytes(from: Array(path.utf8) + [0]) }
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(sender, "x", 1, Int32(MSG_DONTWAIT), $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
        }
        let stormStart = ContinuousClock.now
        while stormStart.duration(to: .now) < .seconds(8) {  // one byte each 200 ms
            push(storm.socket)
            try await Task.sleep(for: .milliseconds(200))  // pacing: one byte each 200 ms
        }
        let woken = harness.all.filter { $0.at >= stormStart && $0.event.isWokenForData("storm") }
        #expect(woken.count == WakeBudget.data.burst, "woken \(woken.count) times in 8 s")
        #expect(harness.all.contains {
            if case .wakePutOff("storm", let cause, let after) = $0.event { cause.contains("data") && after > .seconds(600) } else { false }
        })
        let status = try await harness.status("storm")
        #expect(status.frozen && status.waiting?.first?.contains("data on a socket it named") == true, "\(status)")
        let beats = ((try? String(contentsOfFile: storm.beats, encoding: .utf8)) ?? "").split(separator: "\n")
            .compactMap { Double($0.split(separator: " ")[0]) }
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let since = Double(now.tv_sec) + Double(now.tv_nsec) / 1e9 - 3
        #expect(beats.filter { $0 > since }.count <= 1, "the storm's app ran on after its budget")

        // The other app's own push wakes it.
        let quietAt = ContinuousClock.now
        push(quiet.socket)
        _ = try #require(await harness.firstEvent(after: quietAt, within: .seconds(5)) { $0.isWokenForData("quiet") })
        try await waitUntil(timeout: .seconds(5)) {
            ((try? String(contentsOfFile: quiet.beats, encoding: .utf8)) ?? "").split(separator: "\n").contains { !$0.hasSuffix(" 0") }
        }
        await harness.stop()
    }

    @Test(arguments: HostScenarioTests.freezers)
    func anOrphanThatLeavesTheSessionIsFrozenWithItsApp(freezer: FreezerKind) async throws {
        let harness = try await HostHarness(freezer: freezer, profile: HostScenarioTests.profile) {
            $0.allowsRootApps = true
            $0.allowsSignalsForOtherUsers = true  // as the attack was tried
        }
        let heartbeat = Heartbeat()
        defer {
            Leftovers.kill(Leftovers.processes(mentioning: heartbeat.path))
            heartbeat.remove()
        }
        // Double fork and setsid: the beating process is orphaned to pid 1, in a session of its own.
        let orphan = "(setsid sh -c \"\(heartbeat.loop)\" &); exec sleep 600"
        try await harness.launch("orphan", user: "nobody", ["sh", "-c", orphan])
        try await heartbeat.waitForBeats(3)
        // Statuses all along, as a user would watch it, each with when it was answered.
        let statuses = Locked<[(at: Double, frozen: Bool)]>([])
        let watching = Task {
            while !Task.isCancelled {
                if let status = try? await harness.status("orphan") {
                    statuses.withLock { $0.append((Date().timeIntervalSince1970, status.frozen)) }
                }
                try? await Task.sleep(for: .milliseconds(5))  // pacing: a status every 5 ms, as a user would watch it
            }
        }
        let backgroundAt = ContinuousClock.now
        try await harness.move(.background, "orphan")
        _ = try #require(await harness.firstEvent(after: backgroundAt, within: .seconds(10)) { $0.frozenApp == "orphan" })
        let beats = heartbeat.count
        try await Task.sleep(for: .milliseconds(800))
        #expect(heartbeat.count <= beats + 1, "the orphan beat on while its app was frozen")
        watching.cancel()
        _ = await watching.value
        // Never frozen while it beat: no beat after any status that said frozen.
        let frozenSaid = statuses.withLock { $0 }.filter(\.frozen).map(\.at)
        let lastBeat = heartbeat.times.max() ?? 0
        #expect(!frozenSaid.isEmpty)
        #expect(frozenSaid.allSatisfy { $0 > lastBeat - 0.05 }, "status said frozen \(lastBeat - (frozenSaid.min() ?? 0)) s before the last beat")
        #expect(try await harness.status("orphan").frozen)
        try await harness.move(.terminate, "orphan")
        _ = try #require(await harness.firstEvent(after: backgroundAt, within: .seconds(10)) { $0.exitedApp == "orphan" })
        let ended = heartbeat.count
        try await Task.sleep(for: .milliseconds(300))
        #expect(heartbeat.count == ended, "terminate reached the orphan")
        await harness.stop()
    }

    @Test func aRestartedHostLaunchesAnExitedAppForARegionCrossedMeanwhileButNotOneItsUserQuit() async throws {
        try await GatedGPSD.run(log: HostMonitoringTests.boat.url) { gpsd in
            let monitors = FileManager.default.temporaryDirectory.appendingPathComponent("monitors-\(UUID().uuidString.prefix(8))")
            defer { try? FileManager.default.removeItem(at: monitors) }
            let logs = FileManager.default.temporaryDirectory.appendingPathComponent("restart-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: logs, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: logs) }
            let returning = logs.appendingPathComponent("returning.log").path
            let quit = logs.appendingPathComponent("quit.log").path

            // Authorizations both hosts read, set before either starts.
            let authorization: @Sendable (String) -> AuthorizationFile = { app in AuthorizationFile(url: logs.appendingPathComponent("auth/\(app).json")) }
            for app in ["returning", "quit"] {
                try LocationAuthorizationManager(application: app, file: authorization(app)).setStatus(.always)
            }
            // The first host: both register the region; one exits, the other's user quits it.
            let first = try await HostMonitoringTests.harness(freezer: .cgroup2) { configuration in
                configuration.monitorFolder = monitors
                configuration.authorizationFile = authorization
            }
            let start = ContinuousClock.now
            // "start" holds the log's first fix: outside as the first host knew it, inside at the
            // next host's first fix, as if the boat had crossed it while no host ran.
            let conditions = Self.start
            try await first.launch("returning", HostMonitoringTests.app(log: returning, conditions: conditions, exits: true))
            try await first.launch("quit", HostMonitoringTests.app(log: quit, conditions: conditions))
            try await waitUntil(timeout: .seconds(10)) { HostMonitoringTests.lines(quit).contains("monitor ok") }
            try await first.move(.terminate, "quit")
            for app in ["returning", "quit"] {
                _ = try #require(await first.firstEvent(after: start, within: .seconds(10)) { $0.exitedApp == app })
            }
            await first.stop()
            #expect(FileManager.default.fileExists(atPath: monitors.appendingPathComponent("returning.launch").path))

            // The next host knows both from their records, and watches for the one that may be launched.
            let second = try await HostMonitoringTests.harness(freezer: .cgroup2, gpsd: gpsd.port) { configuration in
                configuration.monitorFolder = monitors
                configuration.authorizationFile = authorization
            }
            #expect(try await second.status("returning").state == "not running")
            #expect(try await second.status("quit").reason?.contains("terminated by request") == true)
            #expect(try await gpsd.waitForWatchers(2), "the recorded app's conditions are watched")
            let fed = ContinuousClock.now
            try await gpsd.go()
            try await waitUntil(timeout: .seconds(30)) {
                HostMonitoringTests.lines(returning).contains { $0.hasPrefix("event start satisfied") }
            }
            let lines = HostMonitoringTests.lines(returning)
            #expect(lines.filter { $0.hasPrefix("launched location-event") }.count == 1, "\(lines)")
            let events = lines.filter { $0.hasPrefix("event ") }.map { $0.split(separator: " ")[1...2].joined(separator: " ") }
            #expect(events == ["start satisfied"], "the crossing made while no host ran, once: \(events)")
            #expect(second.all.contains { $0.at >= fed && $0.event.launchedApp == "returning" })
            try await Task.sleep(for: .seconds(1))  // the same fix would have launched the quit one too
            #expect(!second.all.contains { $0.event.launchedApp == "quit" })
            #expect(HostMonitoringTests.lines(quit) == ["launched by-user", "monitor ok"])
            await second.stop()
        }
    }

    /// `keepalive host` (the daemon) killed with SIGKILL under an app that stays up but never
    /// says hello to the next host: that host takes it back with its conditions, and for its
    /// next event stops it and launches it again, to be told.
    @Test func anAdoptedAppThatNeverReconnectsIsLaunchedAgainForItsEvent() async throws {
        try await GatedGPSD.run(log: HostMonitoringTests.boat.url) { gpsd in
            let keepalive = try Tools.keepalive.path
            let shared = try HostContainmentTests.SharedFolder()
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("adopted-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let socket = directory.appendingPathComponent("host.sock").path
            let configuration = "XDG_CONFIG_HOME=\(directory.appendingPathComponent("config").path)"
            let serve = [
                "/usr/bin/env", configuration, keepalive, "host", "--socket", socket, "--freezer", "cgroup2",
                "--name", "keepalive.test-adopted-\(UUID().uuidString.prefix(8))", "--gpsd", "127.0.0.1:\(gpsd.port)",
                "--monitors", directory.appendingPathComponent("monitors").path,
            ]
            _ = try await runCommand("/usr/bin/env", [configuration, keepalive, "auth", "set", "always", "--app", "tracker"])
            let log = shared.file("tracker.log")
            // The app's protocol part ends with its connection; the app itself (its shell) stays.
            let app = ["sh", "-c", "\"$@\"; exec sleep 600", "sh"] + HostMonitoringTests.app(log: log, conditions: Self.start)

            let first = try HostCrashTests.startHost(serve[0], Array(serve.dropFirst()))
            try await waitUntil(timeout: .seconds(10)) { (try? HostClient(socket: URL(fileURLWithPath: socket))) != nil }
            _ = try await runCommand(keepalive, ["host", "launch", "--socket", socket, "--app", "tracker", "--user", "nobody", "--"] + app)
            try await waitUntil(timeout: .seconds(10)) { HostMonitoringTests.lines(log).contains("monitor ok") }
            kill(first, SIGKILL)
            _ = await processExit(of: first, within: .seconds(10))

            let second = try HostCrashTests.startHost(serve[0], Array(serve.dropFirst()))
            defer {
                signalAndReap(second, SIGTERM)
                Leftovers.kill(Leftovers.processes(mentioning: log))
            }
            try await waitUntil(timeout: .seconds(10)) { (try? HostClient(socket: URL(fileURLWithPath: socket))) != nil }
            let listing = try await runCommand(keepalive, ["host", "status", "--socket", socket, "--json"]).lines.joined()
            #expect(listing.contains("adopted from an earlier host") && listing.contains(#""conditions":1"#), "\(listing)")
            #expect(try await gpsd.waitForWatchers(2), "the adopted app's conditions are watched")
            try await gpsd.go()
            try await waitUntil(timeout: .seconds(30)) { HostMonitoringTests.lines(log).contains { $0.hasPrefix("event start satisfied") } }
            let lines = HostMonitoringTests.lines(log)
            #expect(lines.filter { $0 == "launched location-event" }.count == 1, "\(lines)")
        }
    }

    @Test func appsGetACleanEnvironmentAndCannotReachIntoEachOther() async throws {
        let harness = try await HostHarness(freezer: .cgroup2, profile: HostScenarioTests.profile)
        let shared = try HostContainmentTests.SharedFolder()
        setenv("HOST_ONLY_SECRET", "hunter2", 1)
        defer { unsetenv("HOST_ONLY_SECRET") }
        let victim = """
            import json, os, socket, sys, time
            open(sys.argv[1], "w").write(json.dumps(dict(os.environ)))
            s = socket.socket(socket.AF_UNIX); s.connect(os.environ["KEEPALIVE_HOST_SOCKET"])
            s.sendall((json.dumps({"id": 1, "op": "hello", "app": os.environ["KEEPALIVE_APP"]}) + "\\n").encode())
            open(sys.argv[2], "w").write("%d %d" % (os.getpid(), s.fileno()))
            time.sleep(600)
            """
        var request = HostRequest(.launch, app: "victim")
        request.user = "nobody"
        request.command = ["/usr/bin/python3", "-c", victim, shared.file("environment"), shared.file("victim")]
        request.environment = ["GIVEN": "by launch --env"]
        _ = try await HostClient(socket: harness.host.configuration.socket).send(request)
        try await waitUntil(timeout: .seconds(10)) { shared.read("victim")?.contains(" ") == true }
        let environment = try JSONDecoder().decode([String: String].self, from: Data((shared.read("environment") ?? "").utf8))
        #expect(environment["HOST_ONLY_SECRET"] == nil, "the host's variable reached the app")
        #expect(environment["GIVEN"] == "by launch --env" && environment["KEEPALIVE_APP"] == "victim")
        #expect(environment["HOME"] != nil && environment["PATH"] != nil)

        let spy = """
            import ctypes, os, sys
            libc = ctypes.CDLL(None, use_errno=True)
            pid, fd = map(int, open(sys.argv[1]).read().split())
            results = []
            r = libc.ptrace(16, pid, 0, 0)  # PTRACE_ATTACH
            results.append("ptrace %s" % ("ok" if r == 0 else os.strerror(ctypes.get_errno())))
            pidfd = libc.syscall(434, pid, 0)
            r = libc.syscall(438, pidfd, fd, 0) if pidfd >= 0 else -1
            results.append("pidfd_getfd %s" % ("ok" if r >= 0 else os.strerror(ctypes.get_errno())))
            try: open("/proc/%d/environ" % pid).read(); results.append("environ ok")
            except OSError as e: results.append("environ " + e.strerror)
            open(sys.argv[2], "w").write("\\n".join(results))
            """
        try await harness.launch("spy", user: "nobody", ["/usr/bin/python3", "-c", spy, shared.file("victim"), shared.file("spied")])
        try await waitUntil(timeout: .seconds(10)) { shared.read("spied")?.contains("environ") == true }
        let spied = shared.read("spied") ?? ""
        #expect(spied == "ptrace Operation not permitted\npidfd_getfd Operation not permitted\nenviron Permission denied", "\(spied)")
        await harness.stop()
    }
}

extension AppHost.Event {
    func isWokenForData(_ app: String) -> Bool {
        if case .wokenForData(app) = self { true } else { false }
    }
}
