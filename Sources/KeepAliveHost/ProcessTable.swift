import Glibc

/// Every live process on the machine at one moment, with its parent and session: what the
/// host reads to find an app's processes wherever they went.
struct ProcessTable {
    struct Entry {
        let parent: pid_t
        let session: pid_t
        let state: Character
    }

    private(set) var entries: [pid_t: Entry] = [:]

    /// Reads `/proc` now; zombies are left out (they run nothing and cannot be moved).
    static func now() -> ProcessTable {
        var table = ProcessTable()
        for pid in ProcFS.allProcesses() {
            guard let fields = ProcFS.stat(pid), fields.count > 3, let state = fields[0].first, state != "Z",
                let parent = pid_t(fields[1]), let session = pid_t(fields[3])
            else { continue }
            table.entries[pid] = Entry(parent: parent, session: session, state: state)
        }
        return table
    }

    /// `roots`, every process of `session`, and all their descendants (by parent, however
    /// they were reparented within the set).
    func processes(descendingFrom roots: Set<pid_t>, session: pid_t?) -> Set<pid_t> {
        var found = roots.filter { entries[$0] != nil }
        if let session { found.formUnion(entries.filter { $0.value.session == session }.keys) }
        var grew = true
        while grew {
            let children = entries.filter { !found.contains($0.key) && found.contains($0.value.parent) }.keys
            grew = !children.isEmpty
            found.formUnion(children)
        }
        return found
    }
}
