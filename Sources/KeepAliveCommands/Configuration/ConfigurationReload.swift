import ArgumentParser
import FoundationEssentials
import Glibc
import KeepAliveCore
import UnixSignals

/// SIGHUP, for `keepalive run` or `keepalive host` started with `--config`: the file is read
/// and checked again with the same command line, as at the start. A file that fails is
/// refused and the running settings stay, saying why; what each command does with a good one
/// is its own (`run` restarts in place, `host` applies what it can while running).
enum ConfigurationReload {
    /// What a reload found.
    enum Outcome<Command: ParsableCommand> {
        /// The file or the command line with it does not parse: why.
        case refused(String)
        /// It parses; `changed`, the keys whose settings differ from those the process started with.
        case accepted(Command, ConfiguredArguments.Expansion, changed: [String])
    }

    /// Reads the file again, for a `Command` (the type the process runs).
    static func check<Command: ParsableCommand>(_ type: Command.Type) -> Outcome<Command> {
        let started = ConfiguredArguments.started.withLock { $0 }
        do {
            let expansion = try ConfiguredArguments.expansion(of: Array(ProcessArguments.current.dropFirst()))
            guard let command = try KeepAlive.parseAsRoot(expansion.arguments) as? Command else {
                return .refused("the command line no longer names this command")
            }
            return .accepted(command, expansion, changed: started.changedKeys(to: expansion))
        } catch let error as ConfigurationError {
            return .refused("\(error)")
        } catch {
            return .refused(KeepAlive.message(for: error))
        }
    }

    /// A trapped SIGHUP's stream, or `nil` without `--config` (SIGHUP then ends the process,
    /// as it does any program without a configuration to read).
    static func signals(for file: String?) async -> UnixSignalsSequence? {
        guard file != nil else { return nil }
        return await UnixSignalsSequence(trapping: .sighup)
    }

    /// Replaces the process with itself, same program, arguments and process id (systemd's
    /// main process stays), after the command stopped: it starts again and reads the file.
    /// Nothing the old image held stays open in the new: every descriptor past the standard
    /// three is closed by the exec itself, not before it, since the old image's other threads
    /// (the dispatch event loop's among them) may use theirs until the exec ends them all.
    /// (Closing them first raced with those threads: ThreadSanitizer stopped a restart so.)
    static func restartInPlace() -> Never {
        closeOnExec(from: 3)
        let arguments = ProcessArguments.current
        var pointers = arguments.map { strdup($0) }
        pointers.append(nil)
        execv("/proc/self/exe", pointers)
        let reason = String(cString: strerror(errno))
        Console.error("keepalive: reload: could not start again (\(reason)); exiting so that systemd restarts it\n")
        exit(1)
    }

    /// Marks every open descriptor from `first` on close-on-exec (all closed at once if
    /// `/proc/self/fd` cannot be read).
    private static func closeOnExec(from first: Int32) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else {
            closefrom(first)
            return
        }
        for descriptor in names.compactMap({ Int32($0) }) where descriptor >= first {
            let flags = fcntl(descriptor, F_GETFD)
            if flags >= 0 { _ = fcntl(descriptor, F_SETFD, flags | FD_CLOEXEC) }
        }
    }
}

/// A reload's outcome, as a line: `{"event":"reload","outcome":...,"message":...}` in JSON,
/// else `reload: MESSAGE` (on standard error when refused).
struct ReloadReport {
    enum Outcome: String {
        case refused, unchanged, restarting, applied
    }

    var outcome: Outcome
    var message: String

    func write(json: Bool) {
        if json {
            Console.out(JSONLine(["event": "reload", "outcome": .string(outcome.rawValue), "message": .string(message)]).bytes)
        }
        if outcome == .refused {
            Console.error("keepalive: reload refused: \(message)\n")
        } else if !json {
            Console.out("reload: \(message)\n")
        }
    }
}
