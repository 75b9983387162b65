package import ArgumentParser
import FoundationEssentials
import Logging
import ServiceLifecycle
import UnixSignals

extension KeepAlive {
    /// Delivery on its own: drains the journal to its destinations in a separate process.
    package struct Upload: AsyncParsableCommand {
        package static let configuration = CommandConfiguration(
            abstract: "Deliver the journal's fixes to their destinations, in a process of its own.",
            discussion: """
                The analog of a background URLSession: the host may freeze the app, never the uploader. \
                With no --deliver, delivers to the destinations the journal already has. A destination \
                is delivered by one process at a time (a lease in the journal), so running this beside \
                `keepalive run` never sends a fix twice more than at-least-once requires.
                """
        )

        package init() {}
        @OptionGroup package var delivery: DeliveryOptions

        @Flag(help: "Exit once every destination has nothing left to deliver.")
        package var drain = false

        @Flag(help: "One JSON object a line.")
        package var json = false

        package func run() async throws { try await JournalLink.run(self) }
    }
}
