import Glibc
@testable import KeepAliveCore
import Testing

/// The rules with one home each: "in the foreground", location by state, a child's exit
/// status, a call a signal interrupted.
@Suite struct SharedRulesTests {
    @Test(arguments: [
        (AppState.notRunning, false), (.inactive, true), (.active, true), (.background, false), (.suspended, false),
    ])
    func onlyActiveAndInactiveAreTheForeground(state: AppState, foreground: Bool) {
        #expect(state.isInForeground == foreground)
    }

    @Test func alwaysGetsLocationEverywhereWhenInUseOnlyInTheForegroundTheRestNowhere() {
        let states: [AppState] = [.notRunning, .inactive, .active, .background, .suspended]
        #expect(states.filter { LocationAuthorization.always.allowsLocation(in: $0) } == states)
        #expect(states.filter { LocationAuthorization.whenInUse.allowsLocation(in: $0) } == [.inactive, .active])
        for status in [LocationAuthorization.notDetermined, .restricted, .denied] {
            #expect(states.allSatisfy { !status.allowsLocation(in: $0) })
        }
    }

    @Test func whenInUseFixesFollowTheSameRule() {
        let snapshot = AuthorizationSnapshot(
            application: "app", status: .whenInUse, accuracy: .full, locationServicesEnabled: true,
            isTemporary: false, alwaysPromptShown: false, problem: nil
        )
        #expect(LocationAccess.decide(snapshot, appState: .inactive) == .deliver(reduced: false))
        #expect(LocationAccess.decide(snapshot, appState: .background) != .deliver(reduced: false))
        #expect(LocationAccess.decide(snapshot, appState: .background, holdsBackgroundSession: true) == .deliver(reduced: false))
    }

    @Test func anExitStatusReadsAsAShellWould() throws {
        let exited = try #require(Self.statusOfChild(running: "exit 3"))
        #expect(exited.code == 3 && exited.signal == nil)
        let killed = try #require(Self.statusOfChild(running: "kill -KILL $$"))
        #expect(killed.signal == SIGKILL && killed.code == 128 + SIGKILL)
        #expect(KeepAliveCore.ExitStatus.reap(getpid()) == nil)  // not a child of its own
    }

    @Test func aCallInterruptedBySignalsIsMadeAgainAndItsOtherResultsPassThrough() {
        var calls = 0
        let result = SystemCall.retryingOnInterrupt { () -> Int32 in
            calls += 1
            if calls < 3 {
                errno = EINTR
                return -1
            }
            return 7
        }
        #expect(result == 7 && calls == 3)
        calls = 0
        let failed = SystemCall.retryingOnInterrupt { () -> Int in
            calls += 1
            errno = EBADF
            return -1
        }
        #expect(failed == -1 && calls == 1 && errno == EBADF)
    }

    @Test func aWaitIgnoringCancellationWaitsInACancelledTaskAsTheHostsStopDoes() async {
        let state = ObservedState(0)
        let returned = Locked(false)
        let waiter = Task {
            defer { returned.withLock { $0 = true } }
            return await state.wait(until: { $0 == 1 }, timeout: .seconds(60), ignoringCancellation: true)
        }
        waiter.cancel()
        try? await Task.sleep(for: .milliseconds(50))
        #expect(!returned.withLock { $0 }, "a cancelled task's wait did not wait")
        state.update { $0 = 1 }
        #expect(await waiter.value)
        // Without it, a cancelled task's wait ends at once, unsatisfied.
        let plain = Task { await state.wait(until: { $0 == 2 }, timeout: .seconds(60)) }
        plain.cancel()
        #expect(await plain.value == false)
    }

    /// Runs `sh -c script` and reaps it, waiting.
    private static func statusOfChild(running script: String) -> KeepAliveCore.ExitStatus? {
        var pid: pid_t = 0
        let arguments: [UnsafeMutablePointer<CChar>?] = ["/bin/sh", "-c", script].map { (text: String) in strdup(text) } + [nil]
        defer { arguments.forEach { free($0) } }
        guard posix_spawn(&pid, "/bin/sh", nil, nil, arguments, environ) == 0 else { return nil }
        return ExitStatus.reap(pid, waiting: true)
    }
}
