import Foundation
import LocationKeepAlive
import LocationKeepAliveMocks
import IntegrationSupport
import Testing

/// Scheduled background work under a real host: a frozen app thawed to run its task, and
/// frozen again after it; processing waits for its conditions.
@Suite(.timeLimit(.minutes(2)), .serialized)
struct HostScheduledWorkTests {
    /// A raw protocol app: once its hello is answered it notes `hello` in `log`; on entering the
    /// background it schedules `request`; when told to run a task it notes the time in `log` and
    /// completes it.
    private func app(log: String, request: String) -> [String] {
        let script = """
            import json, os, socket, time
            s = socket.socket(socket.AF_UNIX); s.connect(os.environ["KEEPALIVE_HOST_SOCKET"])
            f = s.makefile("rw")
            out = open("\(log)", "a")
            def send(o): f.write(json.dumps(o) + "\\n"); f.flush()
            send({"id": 1, "op": "hello", "app": os.environ["KEEPALIVE_APP"]})
            f.readline(); out.write("hello\\n"); out.flush()
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

    /// The refresh waits for a network that the test turns on only once the app is frozen: a
    /// loaded host freezes late, and a task due before the freeze runs in the app as it is, with
    /// nothing to thaw (the host right, the test's subject gone).
    @Test(arguments: [FreezerKind.cgroup2, .cgroup1, .signal])
    func aRefreshThawsAFrozenAppRunsAndItIsFrozenAgain(freezer: FreezerKind) async throws {
        let harness = try await HostHarness(freezer: freezer, profile: HostScenarioTests.profile)
        harness.conditions.withLock { $0.hasNetwork = false }
        let log = harness.directory.appendingPathComponent("ran.log").path
        let ranLog = { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
        try await harness.launch(
            "fetcher",
            modes: ["fetch"],
            app(log: log, request: #"{"name": "refresh", "kind": "refresh", "earliest": 1.5, "network": true}"#)
        )
        try await waitUntil(timeout: Tools.patience) { ranLog().hasPrefix("hello") }
        let backgroundAt = ContinuousClock.now
        try await harness.move(.background, "fetcher")
        let frozen = try #require(
            await harness.firstEvent(after: backgroundAt, within: Tools.patience) { $0.frozenApp == "fetcher" },
            "never frozen; the host's events:\(harness.eventLog(from: backgroundAt))"
        )
        #expect(!ranLog().contains("ran refresh"), "ran without a network: \(ranLog())")
        let onlineAt = ContinuousClock.now
        harness.conditions.withLock { $0.hasNetwork = true }
        let thawed = try #require(
            await harness.firstEvent(after: frozen.at, within: Tools.patience) { $0.thawedApp == "fetcher" },
            "never thawed for the task; the host's events:\(harness.eventLog(from: backgroundAt))"
        )
        let again = try #require(
            await harness.firstEvent(after: thawed.at, within: Tools.patience) { $0.frozenApp == "fetcher" },
            "never frozen again; the host's events:\(harness.eventLog(from: backgroundAt))"
        )
        #expect(ranLog().contains("ran refresh"), "the task ran in the app: \(ranLog())")
        let due = backgroundAt.duration(to: thawed.at)
        #expect(due >= .milliseconds(1450), "thawed \(due) after scheduling 1.5 s ahead")
        // Due at 1.5 s when online by then; else the host looks for the network each housekeeping interval (1 s).
        let ready = max(backgroundAt + .milliseconds(1500), onlineAt)
        let late = ready.duration(to: thawed.at)
        let allowed = onlineAt < backgroundAt + .milliseconds(1500) ? Duration.milliseconds(400) : .milliseconds(1400)
        #expect(late <= Tools.bound(allowed), "thawed \(late) after the task could run (\(allowed) allowed)")
        #expect(thawed.at.duration(to: again.at) < Tools.bound(.milliseconds(600)), "frozen again once completed")
        print(
            "host \(freezer): refresh: frozen \(backgroundAt.duration(to: frozen.at)) after the background, thawed \(due) after it for the task, frozen again \(thawed.at.duration(to: again.at)) after"
        )
        await harness.stop()
    }

    @Test func processingWaitsForPower() async throws {
        let harness = try await HostHarness(freezer: .cgroup2, profile: HostScenarioTests.profile)
        harness.conditions.withLock { $0 = SystemConditions(hasExternalPower: false, hasNetwork: true) }
        let log = harness.directory.appendingPathComponent("ran.log").path
        let ranLog = { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
        try await harness.launch(
            "indexer",
            modes: ["processing"],
            app(log: log, request: #"{"name": "index", "kind": "processing", "power": true}"#)
        )
        try await waitUntil(timeout: Tools.patience) { ranLog().hasPrefix("hello") }
        let backgroundAt = ContinuousClock.now
        try await harness.move(.background, "indexer")
        // Due at once: frozen with it waiting, not run.
        try #require(
            await harness.firstEvent(after: backgroundAt, within: Tools.patience) { $0.frozenApp == "indexer" } != nil,
            "never frozen; the host's events:\(harness.eventLog(from: backgroundAt))"
        )
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
        let successful = { log.events.filter { $0["event"] as? String == "poll" && $0["ok"] as? Bool == true } }
        let turns = {
            harness.all.filter { $0.at >= backgroundAt }.compactMap { entry -> Character? in
                if entry.event.frozenApp == "refresher" { return "F" }
                return entry.event.thawedApp == "refresher" ? "T" : nil
            }
        }
        // A loaded host may freeze after a task came due: that one runs unthawed, so two thaws, not three.
        try await waitUntil(timeout: Tools.patience) { successful().count >= 3 && turns().filter { $0 == "T" }.count >= 2 }
        let polls = successful()
        let times = polls.compactMap { $0["fixTime"] as? String }
        #expect(
            zip(times, times.dropFirst()).allSatisfy { $0 < $1 },
            "each refresh gets the log's fix of its moment: \(times)"
        )
        // Each fix schedules the next no sooner than 2 s on: never more often, however late a
        // loaded host is (its lines written a little after, so 1.5 s).
        let written = polls.compactMap(writtenAt)
        let gaps = zip(written, written.dropFirst()).map { $1.timeIntervalSince($0) }
        #expect(written.count == polls.count && gaps.allSatisfy { $0 >= 1.5 }, "one refresh every 2 s at most: \(gaps)")
        let sequence = String(turns())
        #expect(sequence.first == "F" && !sequence.contains("TT"), "each thaw after a freeze: \(sequence)")
        print(
            "host: the service under scheduled-refresh: \(polls.count) refresh polls \(gaps.map { String(format: "%.2f", $0) }) s apart, frozen and thawed \(sequence)"
        )
        await harness.stop()
    }
}
