import ArgumentParser
import FoundationEssentials
import LocationKeepAlive
import Logging
import ServiceLifecycle
import UnixSignals

extension KeepAlive {
    /// Delivery on its own: drains the journal to its destinations in a separate process.
    struct Upload: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Deliver the journal's fixes to their destinations, in a process of its own.",
            discussion: """
                The analog of a background URLSession: the host may freeze the app, never the uploader. \
                With no --deliver, delivers to the destinations the journal already has. A destination \
                is delivered by one process at a time (a lease in the journal), so running this beside \
                `keepalive run` never sends a fix twice more than at-least-once requires.
                """
        )

        @OptionGroup var delivery: DeliveryOptions

        @Flag(help: "Exit once every destination has nothing left to deliver.")
        var drain = false

        @Flag(help: "One JSON object a line.")
        var json = false

        func run() async throws {
            let output = Output(json: json)
            let journal: FixJournal
            let destinations: [Destination]
            do {
                journal = try delivery.openJournal()
                destinations = try delivery.destinations(in: journal)
            } catch {
                output.write(error: error)
                throw ExitCode(1)
            }
            guard !destinations.isEmpty else {
                output.write(error: ValidationError("the journal \(journal.path) has no destinations: give --deliver NAME=URL"))
                throw ExitCode(64)
            }
            let uploads = try JournalDelivery(
                journal: journal,
                destinations: destinations,
                policy: delivery.policy(),
                role: "upload"
            ) { output.write($0) }
            let group = ServiceGroup(
                configuration: .init(
                    services: [
                        .init(
                            service: UploadService(delivery: uploads, drain: drain),
                            successTerminationBehavior: .gracefullyShutdownGroup
                        )
                    ],
                    gracefulShutdownSignals: [.sigterm, .sigint],
                    logger: Logger(label: "keepalive.upload")
                )
            )
            try await group.run()
        }
    }
}

/// `keepalive upload` as a service: delivers until a graceful shutdown (or, with `drain`,
/// until nothing is left).
struct UploadService: Service {
    let delivery: JournalDelivery
    let drain: Bool

    func run() async throws {
        let work = Task { await delivery.run() }
        await withGracefulShutdownHandler {
            if drain {
                while !Task.isCancelled {
                    let status = try? delivery.journal.status()
                    if let status, status.destinations.allSatisfy({ $0.depth == 0 }) { break }
                    try? await Task.sleep(for: .milliseconds(200))
                }
                work.cancel()
            }
            await work.value
        } onGracefulShutdown: {
            work.cancel()
        }
    }
}
