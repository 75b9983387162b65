import ArgumentParser
import FoundationEssentials
import KeepAliveCommands
import KeepAliveCore
import KeepAliveDelivery
import KeepAliveJournal
import Logging
import ServiceLifecycle

extension KeepAlive.Upload: JournalBacked {
    func perform() async throws {
        let interrupts = await Interrupts.trap()
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
            output.write(error: ValidationError("the journal \(journal.file.path) has no destinations: give --deliver NAME=URL"))
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
                        service: UploadService(delivery: uploads, drain: drain, stopTimeout: try delivery.stopBound()),
                        successTerminationBehavior: .gracefullyShutdownGroup
                    )
                ],
                logger: Logger(label: "keepalive.upload")
            )
        )
        try await interrupts.run(group)
    }
}

/// `keepalive upload` as a service: delivers until a graceful shutdown (or, with `drain`,
/// until nothing is left); a shutdown first delivers what waits, for at most `stopTimeout`.
struct UploadService: Service {
    let delivery: JournalDelivery
    let drain: Bool
    let stopTimeout: Duration

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
        } onGracefulShutdown: { [delivery, stopTimeout] in
            Task {
                await delivery.drain(within: stopTimeout)
                work.cancel()
            }
        }
    }
}
