import FoundationEssentials
import Glibc
import KeepAliveCore
public import KeepAliveHostProtocol

/// The host's freezer: where app groups live and how they are frozen, chosen once at start.
public struct Freezer: Sendable {
    /// Why this one: what was found, and what was not.
    public let reason: String
    /// Where the groups live: a cgroup folder, or nowhere (signals, following the kernel's
    /// process events, by which the signal freezer follows every process an app starts; a
    /// cgroup holds its processes' children itself).
    private let home: Home
    /// What each app's group may hold.
    public let limits: AppGroupLimits
    /// Where apps' processes are counted, when not in their v2 group: a folder of the v1 `pids`
    /// hierarchy (`nil`: in the v2 group, or nowhere, see ``processLimitNote``).
    let pidsRoot: String?
    /// Why apps' processes are not limited, when they are not.
    public let processLimitNote: String?

    /// Where the groups live, for each freezer.
    private enum Home: Sendable {
        /// A folder of the v2 hierarchy, and its path inside the hierarchy.
        case cgroup2(root: String, hierarchyPath: String)
        /// A folder of the v1 freezer hierarchy, and its path inside the hierarchy.
        case cgroup1(root: String, hierarchyPath: String)
        /// Sessions, and the kernel's process events.
        case signals(ProcessEvents)
    }

    /// The freezer in use.
    public var kind: FreezerKind {
        switch home {
        case .cgroup2: .cgroup2
        case .cgroup1: .cgroup1
        case .signals: .signal
        }
    }

    /// The folder holding one group per app (cgroup freezers), e.g. `/sys/fs/cgroup/unified/keepalive.host`.
    public var root: String? {
        switch home {
        case .cgroup2(let root, _), .cgroup1(let root, _): root
        case .signals: nil
        }
    }

    /// Chooses the freezer: the one asked for, or the first that works here.
    ///
    /// - Parameters:
    ///   - requested: a freezer kind, or `nil` for the first that works here (cgroup v2, then
    ///     the v1 freezer, then signals).
    ///   - name: the folder the host's groups live in; one per host.
    ///   - limits: what each app's group may hold.
    ///   - creating: make the folder the host's groups live in when it is missing (`false`: only
    ///     find one left there, as the watchdog does once its host has ended and removed it).
    /// - Throws: ``HostError/Code/freezerUnavailable`` naming what is missing, when an explicit
    ///   kind cannot be used (or, for signals, when the kernel's process events cannot be read).
    public static func choose(
        _ requested: FreezerKind?,
        name: String = "keepalive.host",
        limits: AppGroupLimits = AppGroupLimits(),
        creating: Bool = true
    ) throws(HostError) -> Freezer {
        let found = try chooseKind(requested, name: name, creating: creating)
        let counting = processCounting(for: found, name: name, creating: creating)
        let home: Home
        switch (found.kind, found.root, found.hierarchyPath) {
        case (.cgroup2, let root?, let hierarchyPath?): home = .cgroup2(root: root, hierarchyPath: hierarchyPath)
        case (.cgroup1, let root?, let hierarchyPath?): home = .cgroup1(root: root, hierarchyPath: hierarchyPath)
        default:
            do throws(HostError) {
                home = .signals(try ProcessEvents())
            } catch {
                let why = requested == .signal ? "--freezer signal" : "no cgroup freezer, and signals cannot be used either"
                throw HostError(.freezerUnavailable, "\(why): \(error.message)" + (requested == .signal ? "" : " (\(found.reason))"))
            }
        }
        return Freezer(
            reason: found.reason,
            home: home,
            limits: limits,
            pidsRoot: counting.pidsRoot,
            processLimitNote: counting.note
        )
    }

    /// The kind chosen, where its groups live and why.
    private struct Choice {
        let kind: FreezerKind
        let reason: String
        let root: String?
        let hierarchyPath: String?
    }

    /// Where apps' processes are counted: in each app's v2 group when v2 has the pids
    /// controller (`pidsRoot` nil), else in a v1 `pids` hierarchy when one is mounted; or
    /// nowhere, and why (`note`).
    private static func processCounting(for choice: Choice, name: String, creating: Bool) -> (pidsRoot: String?, note: String?) {
        guard choice.kind != .signal else { return (nil, "apps' processes are not limited: the signal freezer makes no groups") }
        if choice.kind == .cgroup2, let root = choice.root,
            (KernelFile.read("\(root)/cgroup.controllers") ?? "").split(whereSeparator: \.isWhitespace).contains("pids"),
            (try? ProcFS.write("+pids", to: "\(root)/cgroup.subtree_control")) != nil
        {
            return (nil, nil)
        }
        switch cgroupRoot(type: "cgroup", controller: "pids", name: name, probe: "cgroup.procs", creating: creating) {
        case .success(let (pids, _)): return (pids, nil)
        case .failure(let why):
            return (nil, "apps' processes are not limited: the v2 hierarchy has no pids controller here and v1 pids: \(why)")
        }
    }

    private static func chooseKind(_ requested: FreezerKind?, name: String, creating: Bool) throws(HostError) -> Choice {
        var notes: [String] = []
        if requested == nil || requested == .cgroup2 {
            switch cgroupRoot(type: "cgroup2", controller: nil, name: name, creating: creating) {
            case .success(let (root, hierarchy)):
                return Choice(
                    kind: .cgroup2,
                    reason: "cgroup v2 is writable at \(root) (cgroup.freeze)"
                        + (notes.isEmpty ? "" : "; " + notes.joined(separator: "; ")),
                    root: root,
                    hierarchyPath: hierarchy
                )
            case .failure(let why):
                if requested == .cgroup2 { throw HostError(.freezerUnavailable, "--freezer cgroup2: \(why)") }
                notes.append("cgroup v2: \(why)")
            }
        }
        if requested == nil || requested == .cgroup1 {
            switch cgroupRoot(type: "cgroup", controller: "freezer", name: name, creating: creating) {
            case .success(let (root, hierarchy)):
                return Choice(
                    kind: .cgroup1,
                    reason: "the cgroup v1 freezer is writable at \(root) (freezer.state)"
                        + (notes.isEmpty ? "" : "; " + notes.joined(separator: "; ")),
                    root: root,
                    hierarchyPath: hierarchy
                )
            case .failure(let why):
                if requested == .cgroup1 { throw HostError(.freezerUnavailable, "--freezer cgroup1: \(why)") }
                notes.append("cgroup v1 freezer: \(why)")
            }
        }
        let reason =
            requested == .signal
            ? "asked for signals (SIGSTOP/SIGCONT to every process of an app's session and every process it started, followed by the kernel's process events)"
            : "falling back to SIGSTOP/SIGCONT (every process an app started, followed by the kernel's process events): " + notes.joined(separator: "; ")
        return Choice(kind: .signal, reason: reason, root: nil, hierarchyPath: nil)
    }

    /// Makes the group an app's processes will run in (a fresh cgroup, or a session to fill).
    /// ``AppProcessGroup/delegate(to:)`` gives it to the app's user once the app is in it.
    public func makeGroup(for app: String) throws(HostError) -> AppProcessGroup {
        let group = group(for: app)
        guard let path = group.path else { return group }
        if access(path, F_OK) == 0 {
            // Left by a host that died: thaw it and take it over only if nothing lives there.
            guard group.processes().isEmpty else {
                throw HostError(.launchFailed, "app \(app) already has processes in \(path): terminate it first")
            }
            try? group.remove()
        }
        guard mkdir(path, 0o755) == 0 else { throw ProcFS.failure("cannot make \(path)", code: .launchFailed) }
        do throws(HostError) {
            try limit(group)
        } catch {
            try? group.remove()
            throw error
        }
        return group
    }

    /// Writes the limits into a new group (the files stay the host's when it is delegated).
    private func limit(_ group: AppProcessGroup) throws(HostError) {
        guard let path = group.path else { return }
        if kind == .cgroup2 {
            try ProcFS.write("\(limits.groups)", to: "\(path)/cgroup.max.descendants")
            try ProcFS.write("\(limits.depth)", to: "\(path)/cgroup.max.depth")
        }
        if let pidsPath = group.pidsPath {
            if mkdir(pidsPath, 0o755) != 0, errno != EEXIST {
                throw ProcFS.failure("cannot make \(pidsPath)", code: .launchFailed)
            }
            try ProcFS.write("\(limits.processes)", to: "\(pidsPath)/pids.max")
        } else if access("\(path)/pids.max", F_OK) == 0 {
            try ProcFS.write("\(limits.processes)", to: "\(path)/pids.max")
        }
    }

    /// The group `app` has or would have, made or not: the one place a freezer's kind decides
    /// how a group is frozen.
    func group(for app: String) -> AppProcessGroup {
        let freezing: any GroupFreezing
        switch home {
        case .cgroup2(let root, let hierarchyPath):
            freezing = CgroupV2Freezing(folder: CgroupFolder(path: "\(root)/\(app)", hierarchyPath: "\(hierarchyPath)/\(app)", controller: nil))
        case .cgroup1(let root, let hierarchyPath):
            freezing = CgroupV1Freezing(
                folder: CgroupFolder(path: "\(root)/\(app)", hierarchyPath: "\(hierarchyPath)/\(app)", controller: "freezer")
            )
        case .signals(let events):
            return AppProcessGroup(app: app, freezing: SignalFreezing(events: events))
        }
        return AppProcessGroup(app: app, freezing: freezing, pidsPath: pidsRoot.map { "\($0)/\(app)" })
    }

    /// The groups found under the root (left by an earlier host), thawed.
    public func thawLeftovers() -> [AppProcessGroup] {
        guard let root else { return [] }
        return CgroupFolder.subfolders(of: root).map { name in
            let group = group(for: name)
            group.thawNow()
            return group
        }
    }

    /// Removes the root folder once it holds no group.
    public func removeRoot() {
        if let root { rmdir(root) }
        if let pidsRoot { rmdir(pidsRoot) }
    }

    /// The writable root for the host's groups in a hierarchy of `type`, made if missing.
    private static func cgroupRoot(
        type: String,
        controller: String?,
        name: String,
        probe: String? = nil,
        creating: Bool = true
    ) -> Result<(String, String), WhyNot> {
        let mounts = ProcFS.mounts(ofType: type).filter { mount in
            controller.map { mount.options.split(separator: ",").contains(Substring($0)) } ?? true
        }
        guard let mount = mounts.first else {
            return .failure(
                WhyNot(text: "no \(type) hierarchy\(controller.map { " with the \($0) controller" } ?? "") is mounted")
            )
        }
        // In the host's own group when that is its user's (systemd's Delegate=yes gives a
        // service its group so): no privilege over the rest of the hierarchy is needed. Else
        // at the hierarchy's root, which takes root's full rights (it is mode 0555).
        var parent = (path: mount.path, hierarchy: "")
        if let own = ProcFS.cgroup(of: getpid(), controller: controller), own != "/" {
            var info = Glibc.stat()
            let folder = mount.path + own
            if lstat(folder, &info) == 0, info.st_uid == geteuid() { parent = (folder, own) }
        }
        let root = "\(parent.path)/\(name)"
        if !creating, access(root, F_OK) != 0 { return .failure(WhyNot(text: "no \(root) is left")) }
        if creating, mkdir(root, 0o755) != 0, errno != EEXIST {
            return .failure(WhyNot(text: "cannot make \(root): \(String(cString: strerror(errno)).lowercased())"))
        }
        // A v2 root cgroup has no cgroup.freeze of its own; its children do, so probe with one.
        let check = probe.map { "\(root)/\($0)" } ?? (type == "cgroup2" ? "\(root)/cgroup.procs" : "\(root)/freezer.state")
        guard access(check, W_OK) == 0 else {
            rmdir(root)
            return .failure(WhyNot(text: "\(check) is not writable"))
        }
        return .success((root, "\(parent.hierarchy)/\(name)"))
    }

    struct WhyNot: Error { let text: String }
}

extension Freezer.WhyNot: CustomStringConvertible {
    var description: String { text }
}
