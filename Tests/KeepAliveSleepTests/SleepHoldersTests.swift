import KeepAliveSleep
import Testing

/// Who else holds the device awake, as a back-to-sleep asks before logind is asked to suspend:
/// every other process's block lock on sleep, whatever its user, and every wakelock but ours.
struct SleepHoldersTests {
    private func lock(_ who: String, what: String = "sleep", mode: String = "block", uid: UInt32 = 0, pid: UInt32) -> SleepHolders.Inhibitor {
        SleepHolders.Inhibitor(what: what, who: who, why: "", mode: mode, uid: uid, pid: pid)
    }

    @Test func anotherProcessBlockLockOnSleepHoldsTheDeviceWhateverItsUser() {
        // Root's upgrade and a user's call: logind passes root's own locks for a root caller
        // (and the service user's for the service): counted here all the same.
        let locks = [lock("updater", uid: 0, pid: 40), lock("call", what: "sleep:idle", uid: 1000, pid: 41)]
        #expect(SleepHolders.others(inhibitors: locks, wakelocks: nil, ownPID: 7, ownWakelock: nil) == ["updater", "call"])
    }

    @Test func ourOwnLocksDelayLocksAndOtherKindsDoNotHoldIt() {
        let locks = [
            lock("keepalive", pid: 7),  // ours: the block lock for the wake's work, the delay lock
            lock("keepalive", mode: "delay", pid: 7),
            lock("NetworkManager", mode: "delay", pid: 50),  // delays a sleep, never holds it off
            lock("gnome-session", what: "shutdown", pid: 51),
            lock("lid", what: "handle-lid-switch", pid: 52),
        ]
        #expect(SleepHolders.others(inhibitors: locks, wakelocks: nil, ownPID: 7, ownWakelock: nil).isEmpty)
    }

    @Test func otherWakelocksHoldItAndOursDoesNot() {
        #expect(SleepHolders.others(inhibitors: [], wakelocks: "keepalive sxmo_call \n", ownPID: 7, ownWakelock: "keepalive") == ["sxmo_call"])
        #expect(SleepHolders.others(inhibitors: [], wakelocks: "keepalive\n", ownPID: 7, ownWakelock: "keepalive").isEmpty)
        #expect(SleepHolders.others(inhibitors: [], wakelocks: "", ownPID: 7, ownWakelock: nil).isEmpty)
        // Two locks of one program, named once; an unnamed lock by its process.
        let twice = [lock("updater", pid: 40), lock("updater", pid: 40), lock("", pid: 99)]
        #expect(SleepHolders.others(inhibitors: twice, wakelocks: "updater", ownPID: 7, ownWakelock: nil) == ["updater", "pid 99"])
    }
}
