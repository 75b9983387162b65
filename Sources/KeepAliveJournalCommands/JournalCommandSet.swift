package import ArgumentParser
package import KeepAliveCommands
import CoreMetrics
import KeepAliveCore
import KeepAliveDelivery
import KeepAliveJournal
package import KeepAliveMonitoring
import FoundationEssentials

/// Options whose checks need the journal's or delivery's types.
protocol JournalChecked {
    /// Throws a `ValidationError` when the options cannot be used.
    func check() throws
}

/// A command whose work needs the journal: done here, in the journal commands module. Its checks, if it
/// has any, are its own `check()`: a command cannot do its work without them being run.
protocol JournalBacked: JournalChecked {
    /// Does the command's work.
    func perform() async throws
}

extension JournalBacked {
    /// No checks beyond the argument parser's.
    func check() throws {}
}

/// The journal commands `keepalive` links into its command tree.
package struct JournalCommandSet: JournalCommands {
    package init() {}

    package func validate(_ command: any ParsableArguments) throws {
        try (command as? any JournalChecked)?.check()
    }

    package func run(_ command: any ParsableCommand) async throws {
        guard let command = command as? any JournalBacked else {
            preconditionFailure("\(type(of: command)) has no journal work")
        }
        try await command.perform()
    }

    package func service(
        _ options: DeliveryOptions, output: Output, recordsMetrics: Bool, waypoints: String?, isLive: Bool
    ) throws -> ServiceJournal {
        let journal = try options.openJournal(comparesClocks: isLive)
        let path = journal.file.path
        let writer = JournalWriter(journal: journal, commitInterval: try options.groupInterval()) { report in
            if recordsMetrics, case .stored(let commit) = report, let offset = commit.systemClockOffset {
                Gauge(label: "keepalive_system_clock_offset_seconds").record(offset.seconds)
            }
            output.write(report, journal: path)
        }
        let destinations = try options.parsedDestinations()
        var delivery: JournalDelivery?
        if !destinations.isEmpty {
            let metrics = recordsMetrics ? DeliveryMetrics(journal: journal, writer: writer) : nil
            delivery = try JournalDelivery(journal: journal, destinations: destinations, writer: writer, policy: options.policy()) {
                metrics?.record($0)
                output.write($0)
            }
        }
        let sessions = destinations.compactMap { destination -> OwnTracksSession? in
            guard case .ownTracksMQTT(let settings) = destination.endpoint else { return nil }
            return OwnTracksSession(settings: settings)
        }
        let recorders = (delivery?.deliverers ?? []).compactMap { $0.transport as? HTTPTransport }.filter { $0.format == .ownTracks }
        var remote: OwnTracksRemoteControl?
        if !sessions.isEmpty || !recorders.isEmpty {
            let file = waypoints.map { URL(fileURLWithPath: $0) }
            let watched = try file.map { try OwnTracksWaypoint.parse(Data(contentsOf: $0)) } ?? []
            remote = OwnTracksRemoteControl(
                sessions: sessions, recorders: recorders, waypoints: WaypointStore(file: file, waypoints: watched),
                delivery: delivery, writer: writer
            )
        }
        let work = JournalWork(writer: writer, delivery: delivery) { left, took, bound, pausing in
            output.writeUndelivered(left, took: took, bound: bound, pausing: pausing)
        }
        return ServiceJournal(recorder: writer, eventRecorder: writer, delivery: work, remote: remote) {
            try? journal.destinations().reduce(0) { $0 + (try writer.waiting(for: $1.name)) }
        }
    }

    package func conditions(fromWaypoints file: String) throws -> [String: MonitorCondition] {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: file))
        } catch {
            throw ValidationError("--waypoints \(file): cannot read it: \(error.fileErrorText)")
        }
        do {
            return try OwnTracksWaypoint.conditions(fromJSON: data)
        } catch {
            throw ValidationError("--waypoints \(file): \(error)")
        }
    }
}
