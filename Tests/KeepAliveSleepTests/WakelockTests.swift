import Foundation
import KeepAliveCore
@testable import KeepAliveSleep
import TestWaiting
import Testing

/// The kernel's wakelocks, as the kernel's interface is told: a keeper that follows the sleep
/// through wakelocks alone (no logind), on a folder of plain files standing in for /sys/power
/// (`wake_lock`, `wake_unlock`: each write appended, so the file is the log of what the kernel
/// was told). The end-to-end path, on a kernel built with CONFIG_PM_WAKELOCKS, is
/// `scripts/sleep-vm --wakelocks`'s.
@Suite(.timeLimit(.minutes(1)))
struct WakelockTests {
    /// A folder with the kernel's two files, empty.
    private func kernelFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("wakelocks-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for name in ["wake_lock", "wake_unlock"] { try Data().write(to: folder.appendingPathComponent(name)) }
        return folder
    }

    /// The one call's settings on the test's kernel folder, with no wakes of its own.
    private func trackerConfiguration(_ folder: URL) -> DeviceSleepKeeper.Configuration {
        var configuration = DeviceSleepKeeper.Configuration()
        configuration.way = .wakelocks
        configuration.wakelockDirectory = folder.path
        configuration.options.wakes = []
        return configuration
    }

    private func told(_ folder: URL, _ name: String) -> [String] {
        ((try? String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    private func keeper(in folder: URL, timeout: Duration = .seconds(60), notices: Locked<[SleepNotice]>) -> DeviceSleepKeeper {
        var configuration = DeviceSleepKeeper.Configuration()
        configuration.way = .wakelocks
        configuration.isRequired = true
        configuration.wakelockDirectory = folder.path
        configuration.wakelockTimeout = timeout
        configuration.options.wakes = []  // no wake alarm: a test does not wake the machine
        return DeviceSleepKeeper(configuration: configuration, hands: IdleHands()) { notice in notices.withLock { $0.append(notice) } }
    }

    @Test func heldWhileTheRulesHoldAndReleasedWhenTheyStop() async throws {
        let folder = try kernelFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let notices = Locked<[SleepNotice]>([])
        let keeper = keeper(in: folder, notices: notices)
        let run = Task { try await keeper.run() }
        try await waitUntil("the keeper follows") { keeper.status.isFollowed }
        #expect(keeper.status.way == .wakelocks)
        // A lock of a run that crashed, released at the start.
        try await waitUntil("the leftover released") { self.told(folder, "wake_unlock") == ["keepalive"] }
        #expect(told(folder, "wake_lock").isEmpty)

        keeper.app(.init(state: .background, authorization: .always))
        try await waitUntil("the wakelock held") { self.told(folder, "wake_lock") == ["keepalive 60000000000"] }
        try await waitUntil("the hold said") { notices.withLock { $0.contains(.wakelockTaken("keepalive", why: "location always")) } }

        keeper.app(.init(state: .suspended, authorization: .always))
        try await waitUntil("the wakelock released") { self.told(folder, "wake_unlock") == ["keepalive", "keepalive"] }
        run.cancel()
        try await run.value
        let said = notices.withLock { $0 }
        #expect(said.first == .followed(.wakelocks, wakelock: "keepalive"))
        #expect(said.contains { if case .wakelockReleased("keepalive", _, _) = $0 { true } else { false } })
        // Released once: the stop found nothing held.
        #expect(told(folder, "wake_unlock") == ["keepalive", "keepalive"])
        #expect(told(folder, "wake_lock") == ["keepalive 60000000000"])
    }

    /// A crash must not hold the device for ever: each hold carries the kernel's timeout and
    /// is renewed every third of it while held; the stop releases it.
    @Test func renewedWithinItsTimeoutWhileHeldAndReleasedAtTheStop() async throws {
        let folder = try kernelFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let notices = Locked<[SleepNotice]>([])
        let keeper = keeper(in: folder, timeout: .milliseconds(300), notices: notices)
        let run = Task { try await keeper.run() }
        keeper.app(.init(state: .background, authorization: .always))
        try await waitUntil("two renewals") { self.told(folder, "wake_lock").count >= 3 }
        #expect(Set(told(folder, "wake_lock")) == ["keepalive 300000000"])
        run.cancel()
        try await run.value
        #expect(told(folder, "wake_unlock") == ["keepalive", "keepalive"])
        #expect(notices.withLock { $0.contains { if case .wakelockReleased(_, "the service stops", _) = $0 { true } else { false } } })
        // No renewal after the release.
        let count = told(folder, "wake_lock").count
        #expect(try await !holds(within: .seconds(1), every: .milliseconds(50)) { self.told(folder, "wake_lock").count > count })
    }

    @Test func aKernelWithoutWakelocksIsAnErrorThatSaysWhatToDo() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("no-wakelocks-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let keeper = keeper(in: folder, notices: Locked([]))
        await #expect(throws: SleepError.setup(
            "the kernel offers no wakelocks (\(folder.path)/wake_lock: it is built without CONFIG_PM_WAKELOCKS): follow the sleep through logind (--device-sleep logind)"
        )) {
            try await keeper.run()
        }
    }

    /// The library's one call: a tracker authorized always holds the device while it follows
    /// the sleep, and lets go when its task ends.
    @Test func aTrackerFollowsTheSleepWithOneCall() async throws {
        let folder = try kernelFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let configuration = trackerConfiguration(folder)
        let notices = Locked<[SleepNotice]>([])
        let manager = LocationManager(source: GPSDSource())
        let following = Task {
            try await DeviceSleepKeeper.follow(manager, configuration: configuration) { notice in notices.withLock { $0.append(notice) } }
        }
        try await waitUntil("the wakelock held") { self.told(folder, "wake_lock") == ["keepalive 60000000000"] }
        following.cancel()
        try await following.value
        #expect(told(folder, "wake_unlock") == ["keepalive", "keepalive"])
        let said = notices.withLock { $0 }
        #expect(said.contains(.wakelockTaken("keepalive", why: "location always")))
        #expect(said.contains { if case .wakelockReleased(_, "the service stops", _) = $0 { true } else { false } })
    }

    /// The one call follows the manager's authorization as it changes: another process's denial
    /// lets the device go at once, always again holds it (a plain value defaulting to always
    /// held the device after a denial, issue 86).
    @Test func aTrackerFollowsItsAuthorizationAsItChanges() async throws {
        let folder = try kernelFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let configuration = trackerConfiguration(folder)
        let file = AuthorizationFile(url: folder.appendingPathComponent("tracker.json"))
        let authorization = LocationAuthorizationManager(application: "tracker", file: file)
        try authorization.setStatus(.always)
        let manager = LocationManager(source: GPSDSource(), authorization: authorization)
        let following = Task { try await DeviceSleepKeeper.follow(manager, configuration: configuration) }
        // Each decision tells the kernel again (a renewal): the files are counted, not matched.
        try await waitUntil("the wakelock held") { self.told(folder, "wake_lock").first == "keepalive 60000000000" }
        let released = told(folder, "wake_unlock").count  // a leftover's release at the start
        // Another process (keepalive auth set denied): the same file, another store.
        try LocationAuthorizationManager(application: "tracker", file: file).setStatus(.denied)
        try await waitUntil("the wakelock let go on the denial") { self.told(folder, "wake_unlock").count > released }
        let held = told(folder, "wake_lock").count
        try LocationAuthorizationManager(application: "tracker", file: file).setStatus(.always)
        try await waitUntil("held again when always comes back") { self.told(folder, "wake_lock").count > held }
        following.cancel()
        try await following.value
    }

    /// A wake of the alarm is held from its first moment (the kernel holds the device from the
    /// expiry until the handler has returned: EPOLLWAKEUP) by a short lock the work's own
    /// replaces; a lock held already is not shortened.
    @Test func theAlarmsExpiryIsBridgedToTheWork() async throws {
        let folder = try kernelFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let wakelock = try KernelWakelock(name: "keepalive", directory: folder.path) { _ in }
        let alarm = try WakeAlarm()
        let expiries = Locked(0)
        try alarm.watchExpiries {
            wakelock.bridge()
            expiries.withLock { $0 += 1 }
        }
        defer { alarm.stopWatching() }
        try alarm.arm(at: BootClock.now() + .milliseconds(20))
        try await waitUntil("the expiry told") { expiries.withLock { $0 } == 1 }
        #expect(told(folder, "wake_lock") == ["keepalive 5000000000"])
        #expect(await wakelock.hold() == nil)
        try alarm.arm(at: BootClock.now() + .milliseconds(20))
        try await waitUntil("the second expiry told") { expiries.withLock { $0 } == 2 }
        #expect(told(folder, "wake_lock") == ["keepalive 5000000000", "keepalive 60000000000"])
        #expect(await wakelock.release() == nil)
    }

    @Test func theNameIsOneWordMadeOfWho() {
        var configuration = DeviceSleepKeeper.Configuration()
        #expect(configuration.wakelockName == "keepalive")
        configuration.who = "keepalive host"
        #expect(configuration.wakelockName == "keepalive-host")
        configuration.who = "my tracker"
        #expect(configuration.wakelockName == "keepalive-my-tracker")
    }
}

/// Hands with nothing to do.
private struct IdleHands: SleepHands {
    func prepareForSleep(within: Duration) async {}
    func resumed(asleep: Duration) async {}
    func runWork(_ kind: WakeKind, within: Duration) async -> Bool { false }
    func deliverNow(within: Duration) async {}
}
