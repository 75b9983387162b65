import FoundationEssentials
import Glibc

/// Starts an app's command in a session of its own, inside its group from the first instruction.
///
/// With a cgroup the command starts as `sh -c 'echo $$ > cgroup.procs && exec "$@"'`: the
/// shell joins the cgroup, then becomes the command, so every child it forks is in the group.
enum AppLauncher {
    /// glibc's `POSIX_SPAWN_SETSID` (spawn.h, glibc 2.26+): the child starts a new session.
    private static let spawnSetSID: Int16 = 0x80

    /// Spawns `arguments` (the command first, looked up in `PATH`) for `group`.
    ///
    /// - Parameters:
    ///   - environment: added to the host's own.
    ///   - output: a file for the app's standard output and error (appended), or `nil` to share the host's.
    /// - Returns: the app's first process id.
    static func launch(
        _ arguments: [String],
        in group: AppProcessGroup,
        environment: [String: String],
        output: String?
    ) throws(HostError) -> pid_t {
        let pid = try spawn(arguments, joining: group.joinFile, environment: environment, output: output)
        group.leader = pid
        return pid
    }

    /// Spawns `arguments` in a new session: joining a cgroup first when `joinFile` is given,
    /// standard input from `/dev/null` or `standardInput`, output to `output` or the host's.
    static func spawn(
        _ arguments: [String],
        joining joinFile: String? = nil,
        environment: [String: String] = [:],
        output: String? = nil,
        standardInput: Int32? = nil
    ) throws(HostError) -> pid_t {
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
        if let joinFile {
            argv = ["/bin/sh", "-c", "echo $$ > \"$0\" && exec \"$@\"", joinFile] + argv
        }
        var merged = ProcessInfo.processInfo.environment
        for (key, value) in environment { merged[key] = value }
        let envp = merged.map { "\($0.key)=\($0.value)" }

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
        if let output {
            posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o600)
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }

        var pid: pid_t = 0
        let result = withCStrings(argv) { argvPointers in
            withCStrings(envp) { envPointers in
                posix_spawn(&pid, argv[0], &actions, &attributes, argvPointers, envPointers)
            }
        }
        guard result == 0 else {
            throw HostError(.launchFailed, "cannot start \(command): \(String(cString: strerror(result)).lowercased())")
        }
        return pid
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
