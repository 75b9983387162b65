package import ArgumentParser
import FoundationEssentials
import Glibc
import KeepAliveCore
import Logging

/// The `keepalive` command: every command, one binary (the journal's through ``JournalLink``).
package struct KeepAlive: AsyncParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "keepalive",
        abstract: "A keep-alive location service over gpsd.",
        version: PackageVersion.current,
        subcommands: [
            Locate.self, Watch.self, Monitor.self, Run.self, Simulate.self, Auth.self, HostCommand.self, Upload.self, JournalCommand.self,
            Export.self, Receiver.self,
        ]
    )

    package init() {}

    /// Parses the arguments and runs the command; `journal` runs the commands that need the
    /// journal (without it they fail, saying so). Usage errors exit 64 (EX_USAGE), as
    /// sysexits.h asks; ArgumentParser's default is 64 too.
    package static func main(journal: (any JournalCommands)?) async {
        JournalLink.install(journal)
        // A reader that went away (a closed pipe, an audio FIFO, gpsd) is an error to handle,
        // never a reason to die.
        signal(SIGPIPE, SIG_IGN)
        // Warnings and errors on standard error; KEEPALIVE_LOG_LEVEL=debug shows every decision.
        let level =
            ProcessInfo.processInfo.environment["KEEPALIVE_LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0) }
            ?? .warning
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        // `run` and `host` with --config: the file's settings before the command line's.
        let arguments: [String]
        do {
            let expansion = try ConfiguredArguments.expansion(of: Array(ProcessArguments.current.dropFirst()))
            ConfiguredArguments.started.withLock { $0 = expansion }
            arguments = expansion.arguments
        } catch {
            Console.error("keepalive: \(error)\n")
            Glibc.exit(ConfigurationError.exitCode)
        }
        do {
            var command = try parseAsRoot(arguments)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }
}
