import KeepAliveCore
import KeepAliveSleep

/// What the device's sleep asks of the host: its watch and its apps' due work. The host holds
/// the keeper, so the hands hold the host weakly.
struct HostSleepHands: SleepHands {
    weak let host: AppHost?
    /// Fixes the host's watch took, counted as they arrive.
    let fixes: ObservedState<Int>
    /// How long a refresh waits for its work to start (a frozen app thawed, an exited one
    /// launched and said hello): none started by then, its conditions did not hold.
    static let workStartBound = Duration.seconds(10)

    init(host: AppHost) {
        self.host = host
        let fixes = ObservedState(0)
        self.fixes = fixes
        host.observeFixes { _ in fixes.update { $0 += 1 } }
    }

    func prepareForSleep(within: Duration) async { await host?.deviceWillSleep() }

    func resumed(asleep: Duration) async { await host?.deviceResumed() }

    /// A refresh: the due work runs (its app thawed or launched) and the device is held until
    /// it ends, at most `bound` (or ``workStartBound``, when none starts). The monitoring check:
    /// a fix for the apps' conditions, whose events wake their apps as when awake. Each waits
    /// for the host's word (its scheduled work's state, a fix counted), never a polling loop.
    func runWork(_ kind: WakeKind, within bound: Duration) async -> Bool {
        guard let host else { return false }
        let deadline = ContinuousClock.now + bound
        if kind == .refresh {
            let work = host.scheduledWork
            let before = work.value.starts
            await host.tick()  // what is due now is done (the loop's timer counts only the time awake)
            guard await work.wait(until: { $0.isRunning || $0.starts > before }, timeout: min(bound, Self.workStartBound)) else {
                return false
            }
            _ = await work.wait(until: { !$0.isRunning }, timeout: ContinuousClock.now.duration(to: deadline))
            return true
        }
        let before = fixes.value
        host.setFixesWanted(true, by: "wake")
        let fixed = await fixes.wait(until: { $0 > before }, timeout: bound)
        host.setFixesWanted(false, by: "wake")
        return fixed
    }

    /// The host delivers nothing of its own: its apps deliver while the rules let them run.
    func deliverNow(within: Duration) async {}
}

extension DeviceSleepKeeper.Status {
    /// As the host's `status` says it.
    var said: String {
        guard isFollowed, let way else { return "not followed (neither systemd-logind nor the kernel's wakelocks reached)" }
        return (heldFor.map { "held awake for \($0)" } ?? "not held awake") + " (through \(way))"
    }
}
