import Foundation
import LocationKeepAlive
import LocationKeepAliveMocks
import Subprocess
import IntegrationSupport
import Testing

/// A board without a real-time clock, with the real binaries on libfaketime (never the
/// machine's own clock): fixes recorded before the clock is set, and fixes from a live
/// receiver (a real gpsd) while the system clock is a year behind and then set right, against
/// a real mosquitto. Nothing is lost to a clock; what arrived while it was wrong carries the
/// receiver's time.
@Suite(.timeLimit(.minutes(4)), .serialized)
struct ClockScenarioTests {
    static let year = 365.0 * 86_400

    static func folder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("clock-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// `keepalive run` on `clock`, a journal and one destination, its JSON lines to a file.
    static func service(_ folder: String, clock: FakeClock, source: [String], journal: String, deliver: String) async throws -> ChildProcess {
        let auth = "\(folder)/auth.json"
        _ = try await run(try Tools.keepalive.path, ["auth", "set", "always", "--app", "tracker", "--auth-file", auth])
        return try ChildProcess(
            "/usr/bin/env",
            clock.env + [
                try Tools.keepalive.path, "run", "--app", "tracker", "--auth-file", auth, "--json", "--journal", journal,
                "--audio-device", "null", "--batch-latency", "200ms", "--commit-interval", "200ms", "--deliver", deliver,
            ] + source,
            output: "\(folder)/service-\(UUID().uuidString.prefix(6)).out"
        )
    }

    static func lines(_ service: ChildProcess, event: String) -> [[String: Any]] {
        service.output.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }.filter { $0["event"] as? String == event }
    }

    static func journaled(_ service: ChildProcess) -> Int {
        lines(service, event: "journal").compactMap { $0["stored"] as? Int }.reduce(0, +)
    }

    /// The database file and its write-ahead log, byte for byte.
    static func bytes(_ journal: String) throws -> [Data] {
        try [journal, journal + "-wal"].map {
            FileManager.default.fileExists(atPath: $0) ? try Data(contentsOf: URL(fileURLWithPath: $0)) : Data()
        }
    }

    /// The board: 30 fixes journaled while the system clock said 2025-06-01 for a
    /// destination that is down; with the clock right, `journal status`, `export` and
    /// `journal dead-letters` read them and change no byte of the file; with the clock two years
    /// ahead, the next run journals 30 more and delivers all 60. Nothing is dropped.
    @Test func fixesRecordedBeforeTheClockIsSetAreKeptUntilDelivered() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let clock = try await FakeClock(folder: folder, offset: "@2025-06-01 00:00:00")
        let journal = "\(folder)/journal.sqlite"
        let replay = ["--replay", NMEAFixture("mt3339.log").url.path, "--speed", "0"]
        let down = try await Tools.freePort()
        let first = try await Self.service(
            folder, clock: clock, source: replay, journal: journal, deliver: "home=mqtt://127.0.0.1:\(down)/owntracks/me/board"
        )
        try await eventually("the replay to end", context: { first.tail }) { first.output.contains("replayFinished") }
        await first.expectCleanStop()
        #expect(Self.journaled(first) == 30)
        let recordedIn2025 = try FixJournal(file: URL(fileURLWithPath: journal), access: .readOnly).records(after: 0)
        let june2025 = 1_748_736_000.0
        #expect(recordedIn2025.allSatisfy { abs($0.recordedAt.timeIntervalSince1970 - june2025) < 3600 }, "recorded by the wrong clock")

        let before = try Self.bytes(journal)
        let keepalive = try Tools.keepalive.path
        let statusCommand = try await runCommand(keepalive, ["journal", "status", "--journal", journal, "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(statusCommand.lines.joined().utf8)) as? [String: Any])
        #expect(object["records"] as? Int == 30 && object["dropped"] as? Int == 0)
        #expect((object["destinations"] as? [[String: Any]])?.first?["depth"] as? Int == 30)
        let export = try await runCommand(keepalive, ["export", "--journal", journal, "--format", "ndjson"])
        #expect(export.exitCode == 0 && export.lines.count == 30)
        let letters = try await runCommand(keepalive, ["journal", "dead-letters", "--journal", journal, "home"])
        #expect(letters.exitCode == 0)
        #expect(try Self.bytes(journal) == before, "commands that read change nothing in the file")

        try clock.set("+730d")
        let broker = try await MosquittoBroker()
        let subscriber = try await MosquittoSubscriber(broker)
        let second = try await Self.service(
            folder, clock: clock, source: replay, journal: journal,
            deliver: "home=mqtt://127.0.0.1:\(broker.port)/owntracks/me/board"
        )
        try await eventually("60 fixes delivered", context: { second.tail }) { subscriber.messages.count >= 60 }
        await second.expectCleanStop()
        let kept = try FixJournal(file: URL(fileURLWithPath: journal), access: .readOnly)
        let status = try kept.status()
        #expect(status.records == 60 && status.dropped == 0)
        #expect(Set(subscriber.messages.map(\.key)).count == 60, "every fix delivered")
        print("clock scenario, recorded before the clock was set (2025-06-01, then right, then +2 years): 60 fixes recorded, 60 kept, 60 delivered, 0 dropped")
    }

    /// A live receiver (gpsd fed fixes whose times are now) while the system clock is a year
    /// behind, then set right mid-run; the broker is down at first, so delivery backs off
    /// across the jump. The service says the clock is wrong and then right again; every fix
    /// gpsd reported is journaled and delivered; the ones that arrived while the clock was wrong
    /// are marked, and their `recordedAt` and OwnTracks `created_at` are the receiver's time.
    @Test func fixesFromALiveReceiverWhileTheClockIsWrongCarryTheReceiversTime() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let clock = try await FakeClock(folder: folder, offset: "-365d")
        let log = URL(fileURLWithPath: "\(folder)/live.nmea")
        let logStart = Date().addingTimeInterval(3)
        try LiveNMEA.write(to: log, start: logStart, count: 24)
        let journal = "\(folder)/journal.sqlite"
        let broker = try await MosquittoBroker()
        let subscriber = try await MosquittoSubscriber(broker)  // its session waits through the broker's restart
        await broker.kill()
        try await GatedGPSD.run(log: log, cycle: 0.5) { gpsd in
            let service = try await Self.service(
                folder, clock: clock, source: ["--gpsd", "127.0.0.1:\(gpsd.port)"], journal: journal,
                deliver: "home=mqtt://127.0.0.1:\(broker.port)/owntracks/me/board"
            )
            #expect(try await gpsd.waitForWatchers(2), "the service watches gpsd")
            try await gpsd.go()
            // The feed starts when the service is ready, on a loaded machine seconds after the
            // log's first time: the clock is then set to the receiver's time as gpsd gives it
            // (as chrony from gpsd would), not to the machine's.
            let lateness = Int(Date().timeIntervalSince(logStart).rounded())
            try await eventually("the clock said to be wrong", context: { service.tail }) {
                !Self.lines(service, event: "clock").isEmpty && Self.journaled(service) >= 6
            }
            try await clock.jump(String(format: "%+d", -lateness))
            try await broker.start()
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            // gpsd may report a second twice (after its RMC and after its GGA): one fix a time.
            let reported = Set(try await gpsd.reports().filter { $0.mode >= 2 }.compactMap { $0.time.flatMap(formatter.date(from:)) })
            let counts = { "\(Self.journaled(service)) journaled, \(subscriber.messages.count) delivered of \(reported.count)\n\(service.tail)" }
            try await eventually("every fix delivered", context: counts) {
                Self.journaled(service) >= reported.count && Set(subscriber.messages.map(\.key)).count >= reported.count
            }
            await service.expectCleanStop()

            let said = Self.lines(service, event: "clock")
            #expect(said.map { $0["wrong"] as? Bool } == [true, false], "\(said)")
            let offset = try #require(said.first?["offset"] as? Double)
            #expect(abs(offset + Self.year - Double(lateness)) < 10, "a year behind, and the feed \(lateness) s late: \(offset) s")
            let records = try FixJournal(file: URL(fileURLWithPath: journal), access: .readOnly).records(after: 0, limit: 1000)
            #expect(Set(records.compactMap(\.location.timestamp)) == reported, "every fix gpsd reported, journaled")
            let marked = records.filter(\.isMarkedForClock)
            #expect(marked.count >= 6 && marked.count < records.count, "\(marked.count) of \(records.count) marked")
            let markedFirst = records.prefix(marked.count).allSatisfy { $0.isMarkedForClock }
            #expect(markedFirst, "the first ones, until the clock was set")
            // Marked: recorded at the receiver's time itself. Not marked: within the tolerance.
            for record in records {
                let apart = record.recordedAt.timeIntervalSince(record.location.timestamp!)
                let bound = record.isMarkedForClock ? 0.001 : 10
                #expect(abs(apart) <= bound, "#\(record.sequence) recorded \(apart) s from its fix")
            }
            let messages = subscriber.messages
            #expect(Set(messages.map(\.key)).count == records.count, "every record delivered")
            for message in messages {
                let apart = (message.fields["created_at"] ?? 0) - (message.fields["tst"] ?? 0)
                #expect(abs(apart) <= 11, "created_at \(apart) s from tst: not a year apart")
            }
            print(
                "clock scenario, live receiver with the system clock a year behind, then set: \(records.count) fixes recorded, "
                    + "\(records.count) kept and delivered, \(marked.count) marked (offset \(Int(offset)) s)"
            )
        }
    }

    /// `keepalive run` in the background on a wall clock that jumps a year forward and back
    /// every 2 s: its 2 s background task still expires when its budget says (not a year later,
    /// not at once), and its one-shot polls still come every second after it.
    @Test func theServicesBackgroundTaskAndPollsIgnoreWallClockJumps() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let clock = try await FakeClock(folder: folder)
        let keepalive = try Tools.keepalive.path
        let auth = "\(folder)/auth.json"
        _ = try await run(keepalive, ["auth", "set", "always", "--app", "jumper", "--auth-file", auth])
        let port = try await Tools.freePort()
        try await withGPSFake(log: NMEAFixture("ublox-8.log").url, port: port) {
            try await waitUntilGPSDAccepts(port: port)
            let arguments = [
                "run", "--gpsd", "localhost:\(port)", "--json", "--policy", "ios13", "--budget", "2s", "--interval", "1s",
                "--pulse", "100ms", "--audio-device", "null", "--app", "jumper", "--auth-file", auth,
            ]
            let (seen, status) = try await RunningCommand.run(keepalive, arguments, environment: clock.environment) { command in
                func object(_ line: String) -> [String: Any]? { (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] }
                while let line = try await command.nextLine(), object(line)?["class"] as? String != "fix" {}
                try await clock.jump("+365d")
                try command.send(.userDefinedOne)  // to the background
                let background = ContinuousClock.now
                let jumps = Task {
                    for offset in ["-365d", "+365d", "-365d", "+0"] {
                        try? clock.set(offset)
                        try? await Task.sleep(for: .seconds(2))  // pacing: the clock jumps every 2 s
                    }
                }
                defer { jumps.cancel() }
                var seen: [(after: Duration, object: [String: Any])] = []
                while background.duration(to: .now) < .seconds(9), let line = try await command.nextLine() {
                    if let object = object(line) { seen.append((background.duration(to: .now), object)) }
                }
                try command.send(.terminate)
                return seen.map { ($0.after, $0.object["event"] as? String ?? "", $0.object["decision"] as? String ?? "", $0.object["ok"] as? Bool) }
            }
            #expect(status == .exited(0))
            let expiring = try #require(seen.first { $0.2.hasPrefix("background task expiring") }, "the background task expires")
            #expect(expiring.0 >= .milliseconds(900) && expiring.0 < Tools.bound(.seconds(4)), "expiring \(expiring.0) after the background")
            let polls = seen.filter { $0.1 == "poll" && $0.0 > expiring.0 }.map(\.0)
            #expect(polls.count >= 4, "a poll a second after the task: \(polls)")
            let gaps = zip(polls.dropFirst(), polls).map { $0 - $1 }
            #expect(gaps.allSatisfy { $0 < Tools.bound(.seconds(3)) }, "no poll waited on the wall clock: \(gaps)")
            print("clock scenario, keepalive run on a wall clock jumping a year every 2 s: task expiring \(expiring.0) after the background, \(polls.count) polls, the longest gap \(gaps.max() ?? .zero)")
        }
    }
}
