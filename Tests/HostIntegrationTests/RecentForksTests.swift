@testable import KeepAliveHost
import IntegrationSupport
import Testing

/// What the signal freezer adds to an app it follows after the app forked: only what the app's
/// first process forked since its own fork and is still running. Pids wrap (at 32768 here), so
/// an earlier process with the same pid must bring none of its children: the freezer would
/// stop, and a kill would kill, processes of someone else.
struct RecentForksTests {
    @Test func aReusedPidBringsNoneOfItsEarlierOwnersChildren() {
        var forks = RecentForks()
        forks.forked(500, from: 1)  // an earlier process with pid 500
        forks.forked(501, from: 500)  // its child, still running: someone else's
        forks.exited(500)
        forks.forked(500, from: 7)  // the app's first process, given pid 500 again
        forks.forked(620, from: 500)
        forks.forked(621, from: 620)  // a grandchild
        forks.forked(622, from: 999)  // not the app's
        #expect(forks.livingDescendants(of: 500) == [620, 621])
    }

    @Test func childrenThatExitedAreNotReturnedNorWhatTheirPidBecame() {
        var forks = RecentForks()
        forks.forked(40, from: 1)
        forks.forked(41, from: 40)
        forks.forked(42, from: 40)
        forks.exited(41)
        forks.forked(41, from: 3)  // pid 41 again, elsewhere
        forks.forked(43, from: 41)  // and its child
        #expect(forks.livingDescendants(of: 40) == [42])
    }

    @Test func aProcessWhoseForkIsNotKeptGetsNothing() {
        var forks = RecentForks(capacity: 8)
        forks.forked(10, from: 1)
        for pid in Int32(100)..<110 { forks.forked(pid, from: 2) }  // the oldest quarter goes, twice
        forks.forked(11, from: 10)
        #expect(forks.livingDescendants(of: 10).isEmpty, "its own fork is gone: nothing is known of its family")
        #expect(forks.livingDescendants(of: 77).isEmpty)
    }
}
