import Foundation
import LocationKeepAlive
import LocationKeepAliveMocks
import IntegrationSupport
import Testing

/// Scheduled background work under a real host: a frozen app thawed to run its task, and
/// frozen again after it; processing waits for its conditions.
@Suite(.timeLimit(.minutes(2)), .serialized)
struct HostScheduledWorkTests {
    /// A raw protocol app: on entering the background it schedules `request`; when told to run
    /// a task it notes the time in `log` and completes it.
    private func app(log: String, request: String) -> [String] {
        let script = """
            import json, os, socket, time
            s = socket.socket(socket.AF_UNIX); s.connect(os.environ["KEEPALIVE_HOST_SOCKET"])
            f = s.makefile("rw")
            out = open("\(log)", "a")
            def send(o): f.write(json.dumps(o) + "\\n"); f.flush()
            send({"id": 1, "op": "hello", "app": os.environ["KEEPALIVE_APP"]})
            for line in f:
                m = json.loads(line)
                if m.get("notice") == "lifecycle" and m.get("event") == "background":
                    send(dict(json.loads('\(request)'), id=2, op="schedule"))
                    send({"id": 3, "op": "ack", "notice": "background"})
                elif m.get("notice") == "run-task":
                    out.write("ran %s %.3f\\n" % (m["name"], time.time())); out.flush()
                    send({"id": 4, "op": "complete", "name": m["name"], "success": True})
                elif m.get("notice") == "will-suspend":
                    send({"id": 5, "op": "ack", "notice": "will-suspend"})
            """
        return ["/usr/bin/python3", "-c", script]
    }

    @Test(arguments: [FreezerKind.cgroup2, .cgroup1, .signal])
    func aRefreshThawsAFrozenAppRunsAndItIsFrozenAgain(freezer: FreezerKind) async throws {
        let harness = try await HostHarness(freezer: freezer, profile: HostScenarioTests.profile)
        let log = harness.directory.appendingPathComponent("ran.log").path
        try await harness.launch(
            "fetcher",
            modes: ["fetch"],
            app(log: log, request: #"{"name": "refresh", "kind": "refresh", "earliest": 1.5}"#)
        )
        try await Task.sleep(for: .milliseconds(500))
        let backgroundAt = ContinuousClock.now
        try await harness.move(.background, "fetcher")
        let frozen = try #require(
            await harness.firstEvent(after: backgroundAt, within: .seconds(3)) { $0.frozenApp == "fetcher" },
            "never frozen; the host's events:\(harness.eventLog(from: backgroundAt))"
        )
        let thawed = try #require(
            await harness.firstEvent(after: frozen.at, within: .seconds(5)) { $0.thawedApp == "fetcher" },
            "never thawed for the task; the host's events:\(harness.eventLog(from: backgroundAt))"
        )
        let again = try #require(
            await harness.firstEvent(after: thawed.at, within: .seconds(5)) { $0.frozenApp == "fetcher" },
            "never frozen again; the host's events:\(harness.eventLog(from: backgroundAt))"
        )
        let ran = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(ran.hasPrefix("ran refresh"), "the task ran in the app: \(ran)")
        let due = backgroundAt.duration(to: thawed.at)
        #expect(
            due >= .milliseconds(1450) && due <= Tools.bound(.milliseconds(1900)),
            "thawed \(due) after scheduling 1.5 s ahead"
        )
        #expect(thawed.at.duration(to: again.at) < Tools.bound(.milliseconds(600)), "frozen again once completed")
        print(
            "host \(freezer): refresh: frozen, thawed \(due) later for the task, frozen again \(thawed.at.duration(to: again.at)) after"
        )
        await harness.stop()
    }

    @Test func processingWaitsForPower() async throws {
        let harness = try await HostHarness(freezer: .cgroup2, profile: HostScenarioTests.profile)
        harness.conditions.withLock { $0 = SystemConditions(hasExternalPower: false, hasNetwork: true) }
        let log = harness.directory.appendingPathComponent("ran.log").path
        try await harness.launch(
            "indexer",
            modes: ["processing"],
            app(log: log, request: #"{"name": "index", "kind": "processing", "power": true}"#)
        )
        try await Task.sleep(for: .milliseconds(500))
        try await harness.move(.background, "indexer")
        try await Task.sleep(for: .seconds(2))
        let ranLog = { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
        #expect(!ranLog().contains("ran index"), "ran without power")
        #expect(try await harness.status("indexer").frozen)
        let pluggedAt = ContinuousClock.now
        harness.conditions.withLock { $0.hasExternalPower = true }
        let thawed = try #require(
            await harness.firstEvent(after: pluggedAt, within: .seconds(3)) { $0.thawedApp == "indexer" },
            "the host's events: \(harness.eventLog(from: pluggedAt))"
        )
        try await waitUntil(timeout: .seconds(3)) { ranLog().contains("ran index") }
        print("host: processing ran \(pluggedAt.duration(to: thawed.at)) after power came")
        await harness.stop()
    }

    @Test func schedulingWithoutTheModeIsRefused() async throws {
        let harness = try await HostHarness(freezer: .signal, profile: HostScenarioTests.profile)
        let path = harness.directory.appendingPathComponent("answers").path
        let requests = [
            #"{"op": "hello", "app": "$APP"}"#, #"{"op": "schedule", "name": "r", "kind": "refresh"}"#,
            #"{"op": "schedule", "name": "r", "kind": "weekly"}"#,
        ]
        try await harness.launch("nofetch", rawProtocolApp(sending: requests, answersTo: path))
        let lines = try await answers(in: path, count: 3)
        #expect(lines[1].contains("turn on the fetch background mode"))
        #expect(lines[2].contains("refresh or processing"))
        await harness.stop()
    }

    /// The service itself under the host with the scheduled-refresh strategy: frozen in the
    /// background, thawed every interval for one fix from the replay, frozen again.
    @Test func theServiceWakesForItsRefreshTasksAndTakesAFixEachTime() async throws {
        let harness = try await HostHarness(freezer: .cgroup2, profile: HostScenarioTests.profile)
        try harness.authorize("refresher", .always)
        let output = harness.directory.appendingPathComponent("refresher.ndjson").path
        try await harness.launch(
            "refresher",
            modes: ["fetch", "location"],
            output: output,
            [
                try Tools.keepalive.path, "run", "--host", "--app", "refresher", "--auth-file",
                harness.authorizationFile(for: "refresher"), "--replay", NMEAFixture("ublox-8.log").url.path,
                "--strategy", "scheduled-refresh", "--interval", "2s", "--audio-device", "null", "--json",
            ]
        )
        let log = AppLog(path: output)
        try await waitUntil(timeout: .seconds(10)) {
            log.events.contains { $0["lifecycle"] as? String == "did become active" }
        }
        let backgroundAt = ContinuousClock.now
        try await harness.move(.background, "refresher")
        try await Task.sleep(for: .milliseconds(6500))
        let polls = log.events.filter { $0["event"] as? String == "poll" && $0["ok"] as? Bool == true }
        let times = polls.compactMap { $0["fixTime"] as? String }
        #expect((2...4).contains(polls.count), "one refresh every 2 s: \(polls.count)")
        #expect(
            zip(times, times.dropFirst()).allSatisfy { $0 < $1 },
            "each refresh gets the log's fix of its moment: \(times)"
        )
        let events = harness.all.filter { $0.at >= backgroundAt }
        let frozen = events.filter { $0.event.frozenApp == "refresher" }.count
        let thawed = events.filter { $0.event.thawedApp == "refresher" }.count
        #expect(frozen >= 3 && thawed >= 2 && (frozen - thawed) <= 1, "frozen \(frozen), thawed \(thawed)")
        print(
            "host: the service under scheduled-refresh: \(polls.count) refresh polls, frozen \(frozen) and thawed \(thawed) times in 6.5 s"
        )
        await harness.stop()
    }
}
