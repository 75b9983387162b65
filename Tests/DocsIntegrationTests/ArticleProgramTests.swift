import Foundation
import IntegrationSupport
import LocationKeepAlive
import Testing

/// The articles' complete programs (`article-programs NAME`), run as printed in the setting they
/// were written for: a network namespace of the test's own whose loopback has gpsd on 2947 (fed
/// the quick start's log by gpsfake) and a broker on 1883 (127.0.0.1 and ::1, as Debian's; its
/// /etc/hosts Debian's too), and the journal where
/// `FixJournal.defaultFile` puts it (`$XDG_STATE_HOME`).
@Suite(.timeLimit(.minutes(5))) struct ArticleProgramTests {
    /// A place for the program: gpsd, the broker, a subscriber to the program's topic, and a
    /// state folder of its own.
    final class Setting {
        let namespace: NetworkNamespace
        let folder: String
        let broker: MosquittoBroker
        let subscriber: ChildProcess
        let gpsfake: ChildProcess

        /// gpsfake sends a sentence each `cycle` seconds (14 an epoch in the log).
        init(cycle: String = "0.1") async throws {
            try Tools.requireGPSD()
            try MosquittoBroker.require()
            namespace = try await NetworkNamespace(hosts: NetworkNamespace.debianHosts)  // localhost: ::1 first
            folder = NSTemporaryDirectory() + "article-program-\(UUID().uuidString.prefix(8))"
            try FileManager.default.createDirectory(atPath: folder + "/state", withIntermediateDirectories: true)
            // On localhost as the articles' programs name it: both loopbacks, as Debian's broker.
            broker = try await MosquittoBroker(port: 1883, namespace: namespace.name, address: "localhost")
            let sub = namespace.command("/usr/bin/mosquitto_sub", ["-h", "127.0.0.1", "-i", "reader", "-q", "1", "-t", "owntracks/me/phone"])
            subscriber = try ChildProcess(sub.path, sub.arguments, output: folder + "/subscriber.txt")
            try await eventually("the subscriber to subscribe", context: { [broker] in broker.log }) { [broker] in
                broker.subscriptions(of: "reader", to: "owntracks/me/phone") == 1
            }
            let log = Tools.repository.appendingPathComponent("Mocks/Fixtures/nmea/ublox-8.log").path
            let fake = namespace.command("/usr/bin/env", ["TMPDIR=\(folder)", "/usr/bin/gpsfake", "-q", "-P", "2947", "-c", cycle, log])
            gpsfake = try ChildProcess(fake.path, fake.arguments, output: folder + "/gpsfake.txt")
            // gpsd listing gpsfake's receiver (an add lost under load leaves it silent: scripts/gpsd-devices).
            let devices = namespace.command("/usr/bin/python3", [Tools.gpsdDevices.path, "2947", "30"])
            let listed = try await runCommand(devices.path, devices.arguments)
            guard listed.exitCode == 0 else {
                throw ToolMissing("gpsfake's gpsd in the namespace lists no receiver: \(listed.lines.joined(separator: " "))")
            }
        }

        deinit {
            gpsfake.signal(SIGKILL)
            subscriber.signal(SIGKILL)
            try? FileManager.default.removeItem(atPath: folder)
        }

        var journal: String { folder + "/state/keepalive/journal.sqlite" }

        /// The program `name`, started inside with `$XDG_STATE_HOME` in the folder, its output in
        /// `output`.txt (the program's name unless given: two of one program need two).
        func start(_ name: String, output: String? = nil) throws -> ChildProcess {
            let program = namespace.command("/usr/bin/env", ["XDG_STATE_HOME=\(folder)/state", try Tools.built("article-programs").path, name])
            return try ChildProcess(program.path, program.arguments, output: folder + "/\(output ?? name).txt")
        }

        /// Waits until `program` has journaled at least `count` records (its output in a failure).
        func waitForJournal(holding count: Int, by program: ChildProcess, timeout: Duration = .seconds(60)) async throws {
            try await eventually("\(count) records journaled", timeout: timeout, context: { program.output }) { [journal] in
                FileManager.default.fileExists(atPath: journal) && (try? allRecords(journal).count) ?? 0 >= count
            }
        }

        /// The records' ids the subscriber received (OwnTracks' `_id`: a record's `shortID`).
        var received: Set<String> {
            let lines = ((try? String(contentsOfFile: folder + "/subscriber.txt", encoding: .utf8)) ?? "").split(separator: "\n")
            return Set(lines.compactMap { line in
                (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["_id"] as? String
            })
        }
    }

    /// "Journaling and delivery"'s tracker, stopped as a service is (SIGTERM) while it journals:
    /// it exits 0, says every fix was delivered, and the broker has every fix it journaled.
    @Test func theJournalingTrackerDeliversEveryFixBeforeItExitsOnSIGTERM() async throws {
        let setting = try await Setting()
        defer { setting.namespace.remove() }
        let tracker = try setting.start("journaling-tracker")
        try await setting.waitForJournal(holding: 10, by: tracker)
        await tracker.expectCleanStop()
        #expect(tracker.output.contains("every fix delivered"), "\(tracker.output)")
        let journaled = Set(try allRecords(setting.journal).map(\.shortID))
        try await eventually("every journaled fix at the subscriber", context: { "\(journaled.subtracting(setting.received).count) missing" }) {
            journaled.isSubset(of: setting.received)
        }
    }

    /// A second tracker on the same journal says at once who delivers it and since when (it
    /// said only "fixes undelivered after 5 s" at its stop), and its stop names the holder.
    @Test func aSecondTrackerOnTheSameJournalSaysWhoDeliversItAndSinceWhen() async throws {
        let setting = try await Setting()
        defer { setting.namespace.remove() }
        let first = try setting.start("journaling-tracker")
        try await setting.waitForJournal(holding: 3, by: first)
        let holder = try #require(try FixJournal(file: URL(fileURLWithPath: setting.journal), access: .readOnly).leaseHolder(of: "home"))
        let second = try setting.start("journaling-tracker", output: "second")
        try await eventually("the second to say who delivers", timeout: .seconds(10), context: { second.output }) {
            second.output.contains("another process delivers home: \(holder.owner) since ")
        }
        await second.expectCleanStop()
        #expect(second.output.contains("delivered by another process, \(holder.owner) since "), "\(second.output)")
        await first.expectCleanStop()
        #expect(first.output.contains("every fix delivered"), "\(first.output)")
    }

    /// The same tracker with its broker gone: the stop waits for delivery, and a second SIGTERM
    /// ends it at once (status 130), as `keepalive run` does; what it journaled stays journaled.
    @Test func aSecondSignalEndsTheTrackersWaitAtOnce() async throws {
        let setting = try await Setting()
        defer { setting.namespace.remove() }
        let tracker = try setting.start("journaling-tracker")
        try await setting.waitForJournal(holding: 3, by: tracker)
        // Delivery is live: only fixes journaled after the broker went wait for the stop.
        await setting.broker.kill()
        let delivered = try allRecords(setting.journal).count
        try await eventually("the tracker to journal 2 fixes the broker did not take", context: { tracker.output }) {
            try allRecords(setting.journal).count >= delivered + 2
        }
        tracker.signal(SIGTERM)
        // Two signals sent at once can reach the process as one: the second waits for the first's word.
        try await eventually("the tracker to say it stops", context: { tracker.output }) {
            tracker.output.contains("stop asked: delivering what waits, for up to 5 s; interrupt again to exit now")
        }
        tracker.signal(SIGTERM)
        let status = await tracker.wait(timeout: .seconds(30))
        #expect(status == 130, "exit \(status):\n\(tracker.output)")
        #expect(tracker.output.contains("interrupted again, exiting now"), "\(tracker.output)")
        #expect(try allRecords(setting.journal).count >= delivered + 2, "what it journaled stays")
    }
}
