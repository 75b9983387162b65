import ArgumentParser
import FoundationEssentials
import KeepAliveHost

extension KeepAlive {
    /// `keepalive host`: the daemon that freezes background apps, and its controls.
    struct HostCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "host",
            abstract: "Run apps under the background rules, frozen for real when nothing keeps them alive.",
            discussion: """
                `keepalive host` (serve) is the daemon. Apps run in a cgroup of their own (or a session \
                stopped with signals); when the policy suspends one, it is frozen. launch, status, \
                foreground, background and terminate speak to it on its socket.
                """,
            subcommands: [
                Serve.self, Launch.self, Status.self, Foreground.self, Background.self, Terminate.self, Watchdog.self,
            ],
            defaultSubcommand: Serve.self
        )
    }
}

/// The control socket, shared by every host command.
struct SocketOption: ParsableArguments {
    @Option(help: ArgumentHelp("The host's control socket.", valueName: "path"))
    var socket: String = AppHost.Configuration.defaultSocket.path

    func validate() throws {
        if socket.isEmpty { throw ValidationError("--socket needs a path") }
    }
}
