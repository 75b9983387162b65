import KeepAliveCore
import KeepAliveHostProtocol
import KeepAliveSleep

/// The host as the arbiter of the device's sleep (``Configuration/deviceSleep``): one
/// ``DeviceSleepKeeper`` for all its apps. Each app's rules go to its machine as they change, so
/// one `block` lock is held while the model lets any app run, and its reason names them
/// (`status` shows it); the earliest begin date of their scheduled work is the refresh wake's
/// time; a sleep closes the host's watch of the receiver, and a wake for a refresh runs the due
/// work (a frozen app thawed for it, an exited one launched) before the device sleeps again.
extension AppHost {
    /// Before a sleep: the watch of the receiver closes (gpsd may power it down).
    func deviceWillSleep() {
        decide(.deviceWillSleep)
    }

    /// After a sleep: the models catch up with the time asleep, and the watch opens again.
    func deviceResumed() {
        for app in apps.values { app.model.advance(to: elapsed) }
        decide(.deviceResumed)
    }

    /// After a wake for a refresh: what is due now is done (the run loop's timers count only
    /// the time awake).
    func runDueWork() {
        for app in apps.values { app.model.advance(to: elapsed) }
        decide(.tick)
    }

    /// Whether an app runs its scheduled work now, or is being launched for it.
    var isRunningScheduledWork: Bool {
        apps.values.contains { $0.model.runningScheduledTask != nil || $0.machine.isLaunching }
    }

    /// The device's sleep, as `status` says it (`nil`: the host was not asked to follow it).
    var deviceStatus: String? {
        guard let keeper = sleepKeeper else { return nil }
        let status = keeper.status
        guard status.isFollowed, let way = status.way else { return "not followed (neither systemd-logind nor the kernel's wakelocks reached)" }
        return (status.heldFor.map { "held awake for \($0)" } ?? "not held awake") + " (through \(way))"
    }
}

/// What the device's sleep asks of the host: its watch and its apps' due work. The host holds
/// the keeper, so the hands hold the host weakly.
struct HostSleepHands: SleepHands {
    weak let host: AppHost?
    /// Fixes the host's watch took, counted as they arrive.
    let fixes: Locked<Int>

    init(host: AppHost) {
        self.host = host
        let fixes = Locked(0)
        self.fixes = fixes
        host.observeFixes { _ in fixes.withLock { $0 += 1 } }
    }

    func prepareForSleep(within: Duration) async { await host?.deviceWillSleep() }

    func resumed(asleep: Duration) async { await host?.deviceResumed() }

    /// A refresh: the due work runs (its app thawed or launched) and the device is held until
    /// it ends, at most `bound` (or 10 s, when none starts: its conditions may not hold). The
    /// monitoring check: a fix for the apps' conditions, whose events wake their apps as when
    /// awake.
    func runWork(_ kind: WakeKind, within bound: Duration) async -> Bool {
        guard let host else { return false }
        let began = ContinuousClock.now
        let deadline = began + bound
        if kind == .refresh {
            await host.runDueWork()
            var started = false
            while ContinuousClock.now < deadline, started || ContinuousClock.now < began + .seconds(10) {
                let running = await host.isRunningScheduledWork
                if started, !running { return true }
                started = started || running
                guard (try? await Task.sleep(for: .milliseconds(200))) != nil else { break }
            }
            return started
        }
        let before = fixes.read { $0 }
        await host.setFixesWanted(true, by: "wake")
        var fixed = false
        while !fixed, ContinuousClock.now < deadline {
            guard (try? await Task.sleep(for: .milliseconds(200))) != nil else { break }
            fixed = fixes.read { $0 } > before
        }
        await host.setFixesWanted(false, by: "wake")
        return fixed
    }

    /// The host delivers nothing of its own: its apps deliver while the rules let them run.
    func deliverNow(within: Duration) async {}
}
