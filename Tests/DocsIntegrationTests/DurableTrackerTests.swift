import Foundation
import IntegrationSupport
import LocationKeepAlive
import Testing

/// "Journaling and delivery"'s durable tracker (`article-programs durable-tracker`), as printed,
/// on a journal disk that fails under it: a tmpfs that fills, then has room again, and an ext4
/// image turned read-only by an error (`errors=remount-ro`, as a failing SD card is). gpsfake
/// sends a sentence each 0.01 s (an epoch each 0.14 s), so a group of 128 fixes is due in
/// about 20 s rather than the minute a group waits at 1 Hz.
@Suite(.timeLimit(.minutes(5))) struct DurableTrackerTests {
    typealias Setting = ArticleProgramTests.Setting

    /// The disk fills: the tracker goes on delivering, holds what it cannot store, and once
    /// there is room stores every held fix; stopped, it says `held 0` and every fix delivered.
    @Test func itGoesOnThroughAFullDiskAndStoresWhatItHeldOnceThereIsRoom() async throws {
        let setting = try await Setting(cycle: "0.01")
        defer { setting.namespace.remove() }
        let disk = setting.folder + "/state/keepalive"
        try await mount(["-t", "tmpfs", "-o", "size=8m,mode=0700", "tmpfs", disk])
        defer { runToEnd("/bin/umount", ["-l", disk]) }
        let tracker = try setting.start("durable-tracker")
        try await setting.waitForJournal(holding: 128, by: tracker, timeout: .seconds(90))
        _ = try await runCommand("/bin/dd", ["if=/dev/zero", "of=\(disk)/filler", "bs=64k"])  // until the disk is full
        let stored = try allRecords(setting.journal).count
        let sent = setting.received.count
        // More than a group delivered while full: a commit was due, failed, and what it held was sent.
        try await eventually("a group's worth delivered while the disk is full", timeout: .seconds(90), context: { tracker.output }) {
            setting.received.count >= sent + 150
        }
        #expect(try allRecords(setting.journal).count == stored, "nothing stored while the disk is full")
        try FileManager.default.removeItem(atPath: "\(disk)/filler")
        try await eventually("the held fixes stored once there is room", timeout: .seconds(60), context: { tracker.output }) {
            try allRecords(setting.journal).count >= stored + 150
        }
        await tracker.expectCleanStop()
        let output = tracker.output
        #expect(output.contains("the disk under journal \(setting.journal) is full"), "\(output.suffix(2_000))")
        #expect(output.contains("fixes in memory, not lost: journaled once the journal can be written again"))
        #expect(output.contains(", held 0"), "the stop's tally: \(output.suffix(1_000))")
        #expect(output.contains("every fix delivered"))
        #expect(!output.contains("dropped"), "nothing held is said dropped")
        let journaled = Set(try allRecords(setting.journal).map(\.shortID))
        try await eventually("every journaled fix at the subscriber", context: { "\(journaled.subtracting(setting.received).count) missing" }) {
            journaled.isSubset(of: setting.received)
        }
    }

    /// The filesystem turns read-only: the tracker says so (not SQLite's "disk I/O error"),
    /// goes on delivering from memory, and its stop says how many fixes only memory held and
    /// that every one was delivered; exit status 0.
    @Test func itGoesOnThroughADiskTurnedReadOnlyAndSaysWhatOnlyMemoryHeld() async throws {
        let setting = try await Setting(cycle: "0.01")
        defer { setting.namespace.remove() }
        let disk = setting.folder + "/state/keepalive", image = setting.folder + "/disk.img"
        _ = FileManager.default.createFile(atPath: image, contents: nil)
        try FileHandle(forWritingTo: URL(fileURLWithPath: image)).truncate(atOffset: 16 << 20)
        _ = try await run("/sbin/mkfs.ext4", ["-q", image])
        try await mount(["-o", "loop,errors=remount-ro", image, disk])
        defer { runToEnd("/bin/umount", ["-l", disk]) }
        let device = try await run("/bin/findmnt", ["-n", "-o", "SOURCE", disk]).trimmingCharacters(in: .whitespacesAndNewlines)
        let tracker = try setting.start("durable-tracker")
        try await setting.waitForJournal(holding: 128, by: tracker, timeout: .seconds(90))
        let sent = setting.received.count
        // Read before the error: a journal on a filesystem turned read-only is read after fsck.
        let journaled = Set(try allRecords(setting.journal).map(\.shortID))
        try "1".write(toFile: "/sys/fs/ext4/\((device as NSString).lastPathComponent)/trigger_fs_error", atomically: false, encoding: .utf8)
        try await eventually("a group's worth delivered while read-only", timeout: .seconds(90), context: { tracker.output }) {
            setting.received.count >= sent + 150
        }
        await tracker.expectCleanStop()
        let output = tracker.output
        #expect(output.contains("the filesystem under journal \(setting.journal) is read-only"), "\(output.suffix(2_000))")
        #expect(!output.contains("disk I/O error"))
        #expect(output.contains("fixes in memory, not lost"))
        #expect(output.contains("fixes held in memory, never journaled"), "the stop says what only memory held")
        #expect(output.contains("(the journal cannot be written: "), "the tally names why: \(output.suffix(1_000))")
        #expect(output.contains("every fix delivered"), "the held fixes reached the broker from memory")
        #expect(!output.contains("dropped"))
        #expect(journaled.isSubset(of: setting.received), "\(journaled.subtracting(setting.received).count) journaled fixes missing")
        #expect(setting.received.count > journaled.count + 100, "the held fixes at the broker too")
    }

    private func mount(_ arguments: [String]) async throws {
        try FileManager.default.createDirectory(atPath: arguments.last!, withIntermediateDirectories: true)
        let mounted = try await runCommand("/bin/mount", arguments)
        guard mounted.exitCode == 0 else {
            throw ToolMissing("mounting the journal's disk needs root (and loop devices for ext4; CI runs as root): \(mounted.error)")
        }
    }
}
