package import ArgumentParser
import FoundationEssentials

extension KeepAlive {
    /// `keepalive journal status|dead-letters|retry`.
    package struct JournalCommand: ParsableCommand {
        package static let configuration = CommandConfiguration(
            commandName: "journal",
            abstract: "Look into the fix journal and its delivery queues.",
            subcommands: [Status.self, DeadLetters.self, Retry.self],
            defaultSubcommand: Status.self
        )

        package init() {}

        /// `--journal` and `--json`, shared by every journal subcommand.
        package struct JournalOptions: ParsableArguments {
            @Option(help: ArgumentHelp("The journal (default: $XDG_STATE_HOME/keepalive/journal.sqlite).", valueName: "path"))
            package var journal: String?

            package init() {}
            @Flag(help: "JSON instead of text.")
            package var json = false
        }

        package struct Status: AsyncParsableCommand {
            package static let configuration = CommandConfiguration(
                abstract: "Records, bytes, oldest and newest fix; per destination its depth and errors."
            )

            package init() {}
            @OptionGroup package var options: JournalOptions

            package func run() async throws { try await JournalLink.run(self) }
        }

        package struct DeadLetters: AsyncParsableCommand {
            package static let configuration = CommandConfiguration(
                commandName: "dead-letters",
                abstract: "The fixes servers refused for good, with why."
            )

            package init() {}
            @OptionGroup package var options: JournalOptions

            @Argument(help: "Only this destination.")
            package var destination: String?

            package func run() async throws { try await JournalLink.run(self) }
        }

        package struct Retry: AsyncParsableCommand {
            package static let configuration = CommandConfiguration(
                abstract: "Send a destination's dead letters again, before its next fixes."
            )

            package init() {}
            @OptionGroup package var options: JournalOptions

            @Argument(help: "The destination.")
            package var destination: String

            package func run() async throws { try await JournalLink.run(self) }
        }
    }
}
