import CProcessControl
import FoundationEssentials
import Glibc
import KeepAliveCore
import KeepAliveHostProtocol

/// Starts an app's command in a session of its own, inside its group from the first
/// instruction, as its user, with no way back to the host's privileges.
///
/// With a cgroup the command starts as `sh -c 'echo $$ > cgroup.procs && exec "$@"'`: the
/// shell joins the cgroup (as the host, which may write there), then becomes `setpriv`
/// (util-linux), which takes the app's user and groups, drops every capability, sets
/// `PR_SET_NO_NEW_PRIVS` (a setuid program run by the app gains nothing) and becomes the
/// command. So every child it forks is in the group and runs as the app's user. The app
/// inherits standard input (`/dev/null`), output and error, and no other descriptor.
enum AppLauncher {
    /// glibc's `POSIX_SPAWN_SETSID` (spawn.h, glibc 2.26+): the child starts a new session.
    private static let spawnSetSID: Int16 = 0x80
    /// The shell that joins the cgroup, then becomes the app (only once it joined).
    static let joinScript = "echo $$ > \"$0\" && exec \"$@\""
    /// The same for two groups (the freezer's and the v1 `pids` one).
    static let joinBothScript = "echo $$ > \"$0\" && echo $$ > \"$1\" && shift && exec \"$@\""

    /// Whether `pid` has become the app: its command line is there and no longer the shell
    /// that joins the cgroup (which execs only once it joined).
    static func hasJoined(_ pid: pid_t) -> Bool {
        guard let line = KernelFile.read("/proc/\(pid)/cmdline"), !line.isEmpty else { return false }
        return !line.contains(joinScript) && !line.contains(joinBothScript)
    }

    /// Spawns `arguments` (the command first, looked up in `PATH`) for `group`, as `user`.
    ///
    /// - Parameters:
    ///   - environment: added to an allow-list of the host's own (`PATH`, `LANG`, `TZ`, the
    ///     `KEEPALIVE_` ones); `HOME`, `USER` and `LOGNAME` are the user's.
    ///   - output: a file for the app's standard output and error (appended, opened with the
    ///     user's permissions), or `nil` to share the host's.
    /// - Returns: the app's first process id.
    static func launch(
        _ arguments: [String],
        in group: AppProcessGroup,
        as user: AppUser,
        environment: [String: String],
        output: String?
    ) throws(HostError) -> pid_t {
        let pid = try spawn(
            arguments,
            joining: group.joinFiles,
            as: user,
            environment: environment,
            output: output
        )
        group.leader = pid
        return pid
    }

    /// Spawns `arguments` in a new session: joining the cgroups of `joinFiles` first,
    /// as `user` when given (the host's own processes, such as its watchdog, are not), standard
    /// input from `/dev/null` or `standardInput`, output to `output` or the host's.
    static func spawn(
        _ arguments: [String],
        joining joinFiles: [String] = [],
        as user: AppUser? = nil,
        environment: [String: String] = [:],
        output: String? = nil,
        standardInput: Int32? = nil
    ) throws(HostError) -> pid_t {
        let (argv, envp) = try commandLine(arguments, joining: joinFiles, as: user, environment: environment)
        let command = arguments[0]

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)  // the host's blocked signals stay its own
        var defaults = sigset_t()
        sigfillset(&defaults)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(
            &attributes,
            Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF) | spawnSetSID
        )
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let standardInput {
            posix_spawn_file_actions_adddup2(&actions, standardInput, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        var outputDescriptor: Int32?
        defer { if let outputDescriptor { close(outputDescriptor) } }
        if let output {
            let descriptor = try open(output, as: user)
            outputDescriptor = descriptor
            posix_spawn_file_actions_adddup2(&actions, descriptor, 1)
            posix_spawn_file_actions_adddup2(&actions, descriptor, 2)
        }
        cprocess_spawn_close_from(&actions, 3)  // the host's sockets, journals and pipes stay its own

        var pid: pid_t = 0
        let start = {
            withCStrings(argv) { argvPointers in
                withCStrings(envp) { envPointers in
                    posix_spawn(&pid, argv[0], &actions, &attributes, argvPointers, envPointers)
                }
            }
        }
        // An app starts in a Landlock domain of its own; the host's own helpers do not.
        let result = user == nil ? start() : AppConfinement.confined(start)
        guard result == 0 else {
            throw HostError(.launchFailed, "cannot start \(command): \(String(cString: strerror(result)).lowercased())")
        }
        return pid
    }

    /// What runs and with what variables: the executable found in PATH, behind the privilege
    /// drop to `user` and the shell that joins `joinFiles`; the host's environment (for an app,
    /// only what ``isPassedToApps(_:)`` lets through, with its user's home and name) and `environment`.
    private static func commandLine(
        _ arguments: [String],
        joining joinFiles: [String],
        as user: AppUser?,
        environment: [String: String]
    ) throws(HostError) -> (argv: [String], environment: [String]) {
        guard let command = arguments.first, !command.isEmpty else {
            throw HostError(.launchFailed, "launch needs a command after --")
        }
        guard let executable = resolve(command) else {
            throw HostError(
                .launchFailed,
                "cannot start \(command): no such executable file\(command.contains("/") ? "" : " in PATH")"
            )
        }
        var argv = [executable] + arguments.dropFirst()
        var merged = ProcessInfo.processInfo.environment
        if let user {
            argv = try privilegeDrop(to: user) + ["--"] + argv
            merged = merged.filter { isPassedToApps($0.key) }
            merged["HOME"] = user.home
            merged["USER"] = user.name
            merged["LOGNAME"] = user.name
        }
        switch joinFiles.count {
        case 0: break
        case 1: argv = ["/bin/sh", "-c", joinScript, joinFiles[0]] + argv
        default: argv = ["/bin/sh", "-c", joinBothScript, joinFiles[0], joinFiles[1]] + argv
        }
        for (key, value) in environment { merged[key] = value }
        return (argv, merged.map { "\($0.key)=\($0.value)" })
    }

    /// Whether an app gets the host's variable `name`: only what locates and localises it and
    /// the host's own `KEEPALIVE_` ones (a secret set for the host stays the host's).
    static func isPassedToApps(_ name: String) -> Bool {
        ["PATH", "LANG", "TZ"].contains(name) || name.hasPrefix("KEEPALIVE_")
    }

    /// `setpriv` and its options: the user's ids and groups (a root host), no capabilities,
    /// no new privileges.
    private static func privilegeDrop(to user: AppUser) throws(HostError) -> [String] {
        guard let setpriv = resolve("setpriv") ?? ["/usr/bin/setpriv", "/bin/setpriv"].first(where: { access($0, X_OK) == 0 })
        else {
            throw HostError(
                .launchFailed,
                "apps are started through setpriv (util-linux), which is missing: sudo apt-get install util-linux"
            )
        }
        var options = [setpriv, "--no-new-privs", "--inh-caps=-all", "--ambient-caps=-all"]
        guard geteuid() == 0 else { return options }  // an unprivileged host's apps are its own user
        if !user.isRoot {
            options += ["--reuid=\(user.uid)", "--regid=\(user.gid)"]
            options += user.groups.isEmpty ? ["--clear-groups"] : ["--groups=" + user.groups.map(String.init).joined(separator: ",")]
            options.append("--bounding-set=-all")
        }
        return options
    }

    /// The output file, appended to and made 0600 if new, opened as `user` would open it.
    private static func open(_ path: String, as user: AppUser?) throws(HostError) -> Int32 {
        let flags = O_WRONLY | O_CREAT | O_APPEND
        let descriptor =
            if let user, user.uid != UInt32(geteuid()) {
                cprocess_open_as(path, flags, 0o600, uid_t(user.uid), gid_t(user.gid))
            } else {
                Glibc.open(path, flags | O_CLOEXEC, 0o600)
            }
        guard descriptor >= 0 else {
            let who = user.map { " as \($0.name)" } ?? ""
            throw ProcFS.failure("cannot open the output file \(path)\(who)", code: .launchFailed)
        }
        return descriptor
    }

    /// The command's path: as given when it names a path, else the first match in `PATH`.
    static func resolve(_ command: String) -> String? {
        func isExecutable(_ path: String) -> Bool {
            var info = stat()
            return access(path, X_OK) == 0 && stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
        }
        if command.contains("/") { return isExecutable(command) ? command : nil }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(command)" }.first(where: isExecutable)
    }

    private static func withCStrings<R>(
        _ strings: [String],
        _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R
    ) -> R {
        let pointers = strings.map { strdup($0) } + [nil]
        defer { for pointer in pointers { free(pointer) } }
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}
