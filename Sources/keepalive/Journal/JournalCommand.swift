import ArgumentParser
import FoundationEssentials
import LocationKeepAlive

extension KeepAlive {
    /// `keepalive journal status|dead-letters|retry`.
    struct JournalCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "journal",
            abstract: "Look into the fix journal and its delivery queues.",
            subcommands: [Status.self, DeadLetters.self, Retry.self],
            defaultSubcommand: Status.self
        )

        /// `--journal` and `--json`, shared by every journal subcommand.
        struct JournalOptions: ParsableArguments {
            @Option(help: ArgumentHelp("The journal (default: $XDG_STATE_HOME/keepalive/journal.sqlite).", valueName: "path"))
            var journal: String?

            @Flag(help: "JSON instead of text.")
            var json = false

            /// One JSON document on standard output, keys sorted, times in ISO 8601.
            static func printJSON(_ value: some Encodable) throws {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                encoder.dateEncodingStrategy = .iso8601
                Console.out(Array(try encoder.encode(value)) + [10])
            }

            func open() throws -> FixJournal {
                do {
                    return try FixJournal(path: journal ?? FixJournal.defaultPath)
                } catch {
                    Output(json: json).write(error: error)
                    throw ExitCode(1)
                }
            }
        }

        struct Status: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Records, bytes, oldest and newest fix; per destination its depth and errors."
            )

            @OptionGroup var options: JournalOptions

            func run() throws {
                let status = try options.open().status()
                if options.json {
                    try JournalOptions.printJSON(status)
                    return
                }
                var text = "journal \(status.path)\n"
                text += "  \(status.records) fixes, \(status.bytes / 1024) KiB, last #\(status.lastSequence)\n"
                text += "  oldest \(status.oldestFix.map(ISO8601Text.string) ?? "-"), newest \(status.newestFix.map(ISO8601Text.string) ?? "-")\n"
                if status.dropped > 0 {
                    text += "  retention dropped \(status.dropped) (\(status.droppedUndelivered) not delivered everywhere)\n"
                }
                for destination in status.destinations {
                    text += "\(destination.name): \(Destination.redacted(destination.settings))\n"
                    text += "  depth \(destination.depth), delivered through #\(destination.deliveredThrough)"
                    if let age = destination.oldestUndeliveredAge { text += ", oldest waiting \(Int(age)) s" }
                    text += ", dead letters \(destination.deadLetters)\n"
                    text += "  last success \(destination.lastSuccess.map(ISO8601Text.string) ?? "never")"
                    if let error = destination.lastError {
                        text += ", last error \(destination.lastErrorAt.map(ISO8601Text.string) ?? ""): \(error)"
                    }
                    text += "\n"
                    if let owner = destination.deliveredBy { text += "  delivered by \(owner)\n" }
                }
                Console.out(text)
            }
        }

        struct DeadLetters: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "dead-letters",
                abstract: "The fixes servers refused for good, with why."
            )

            @OptionGroup var options: JournalOptions

            @Argument(help: "Only this destination.")
            var destination: String?

            func run() throws {
                let letters = try options.open().deadLetters(for: destination)
                if options.json {
                    try JournalOptions.printJSON(letters)
                    return
                }
                if letters.isEmpty { Console.out("no dead letters\n") }
                for letter in letters {
                    Console.out(
                        "\(letter.destination) #\(letter.sequence): \(letter.reason) (\(letter.tries) tries, \(ISO8601Text.string(letter.at)))"
                            + (letter.isQueuedForRetry ? ", queued for retry" : "") + "\n"
                    )
                }
            }
        }

        struct Retry: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Send a destination's dead letters again, before its next fixes."
            )

            @OptionGroup var options: JournalOptions

            @Argument(help: "The destination.")
            var destination: String

            func run() throws {
                let journal = try options.open()
                do {
                    let count = try journal.retryDeadLetters(for: destination)
                    Console.out("\(count) dead letters of \(destination) queued for retry\n")
                } catch {
                    Output(json: options.json).write(error: error)
                    throw ExitCode(1)
                }
            }
        }
    }
}
