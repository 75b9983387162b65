/// The kernel's latest fork and exit events, in its order: what a process started and what
/// still runs of it, for a process followed only after it forked.
///
/// Only the events since the process's own fork count: pids wrap (at 32768 on many systems),
/// so an earlier process with the same pid, and the children it forked, are another app's or
/// none. Children that exited since are not returned, whatever their pid is now.
struct RecentForks: Sendable {
    private enum Event {
        case fork(child: Int32, parent: Int32)
        case exit(Int32)
    }

    private var events: [Event] = []
    /// How many events are kept; the oldest quarter goes when it is reached.
    private let capacity: Int

    init(capacity: Int = 4_096) {
        self.capacity = capacity
    }

    mutating func forked(_ child: Int32, from parent: Int32) {
        append(.fork(child: child, parent: parent))
    }

    mutating func exited(_ pid: Int32) {
        append(.exit(pid))
    }

    /// The descendants of `pid` forked since its own fork and not exited since (empty when its
    /// fork is not among the events kept).
    func livingDescendants(of pid: Int32) -> [Int32] {
        guard let birth = events.lastIndex(where: { if case .fork(pid, _) = $0 { true } else { false } }) else { return [] }
        var family: Set<Int32> = [pid]
        var descendants: [Int32] = []
        for event in events[(birth + 1)...] {
            switch event {
            case .fork(let child, let parent) where family.contains(parent):
                family.insert(child)
                descendants.append(child)
            case .fork:
                break
            case .exit(let gone):
                family.remove(gone)
                descendants.removeAll { $0 == gone }
            }
        }
        return descendants
    }

    /// Whether `pid` exited after its last fork kept here (a process that ended before it was
    /// followed: following it would follow whoever gets its pid next).
    func hasExited(_ pid: Int32) -> Bool {
        for event in events.reversed() {
            switch event {
            case .exit(pid): return true
            case .fork(pid, _): return false
            default: continue
            }
        }
        return false
    }

    private mutating func append(_ event: Event) {
        events.append(event)
        if events.count > capacity { events.removeFirst(capacity / 4) }
    }
}
