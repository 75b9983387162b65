package import ArgumentParser
import FoundationEssentials
import Glibc
import SystemPackage

extension KeepAlive {
    /// `keepalive export`: the journal as a track, streamed.
    package struct Export: AsyncParsableCommand {
        package static let configuration = CommandConfiguration(
            abstract: "Write the journal's fixes as GPX, GeoJSON, NDJSON or CSV.",
            discussion: """
                Streams from the journal in constant memory. With --output, writes FILE.partial and \
                renames it when complete, so FILE is never a truncated track.
                """
        )

        package init() {}
        @Option(help: ArgumentHelp("The journal (default: $XDG_STATE_HOME/keepalive/journal.sqlite).", valueName: "path"))
        package var journal: String?

        @Option(help: "gpx, geojson, ndjson or csv.")
        package var format = "gpx"

        @Option(help: ArgumentHelp("Only fixes at or after this time (ISO 8601).", valueName: "time"))
        package var from: String?

        @Option(help: ArgumentHelp("Only fixes at or before this time (ISO 8601).", valueName: "time"))
        package var to: String?

        @Option(name: .customLong("segment-gap"), help: ArgumentHelp("GPX: a new trkseg after a gap longer than this.", valueName: "duration"))
        package var segmentGap = "5m"

        @Option(help: ArgumentHelp("Write to this file instead of standard output.", valueName: "path"))
        package var output: String?

        package func validate() throws { try JournalLink.validate(self) }

        package func run() async throws { try await JournalLink.run(self) }
    }
}
