import ArgumentParser
import FoundationEssentials
import LocationKeepAlive
import Glibc
import SystemPackage

extension KeepAlive {
    /// `keepalive export`: the journal as a track, streamed.
    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write the journal's fixes as GPX, GeoJSON, NDJSON or CSV.",
            discussion: """
                Streams from the journal in constant memory. With --output, writes FILE.partial and \
                renames it when complete, so FILE is never a truncated track.
                """
        )

        @Option(help: ArgumentHelp("The journal (default: $XDG_STATE_HOME/keepalive/journal.sqlite).", valueName: "path"))
        var journal: String?

        @Option(help: "gpx, geojson, ndjson or csv.")
        var format = "gpx"

        @Option(help: ArgumentHelp("Only fixes at or after this time (ISO 8601).", valueName: "time"))
        var from: String?

        @Option(help: ArgumentHelp("Only fixes at or before this time (ISO 8601).", valueName: "time"))
        var to: String?

        @Option(name: .customLong("segment-gap"), help: ArgumentHelp("GPX: a new trkseg after a gap longer than this.", valueName: "duration"))
        var segmentGap = "5m"

        @Option(help: ArgumentHelp("Write to this file instead of standard output.", valueName: "path"))
        var output: String?

        func validate() throws {
            guard TrackFormat(rawValue: format) != nil else { throw ValidationError("--format takes gpx, geojson, ndjson or csv") }
            guard Duration(parsing: segmentGap) != nil else { throw ValidationError("--segment-gap takes a duration such as 5m") }
            _ = try Self.time(from, "--from")
            _ = try Self.time(to, "--to")
        }

        static func time(_ text: String?, _ flag: String) throws -> Date? {
            guard let text else { return nil }
            if let date = try? Date(text, strategy: .iso8601) { return date }
            if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) { return date }
            throw ValidationError("\(flag) takes an ISO 8601 time such as 2026-11-22T10:00:00Z")
        }

        func run() throws {
            let exporter = TrackExporter(format: TrackFormat(rawValue: format)!, segmentGap: Duration(parsing: segmentGap)!)
            do {
                let journal = try FixJournal(path: journal ?? FixJournal.defaultPath)
                let from = try Self.time(from, "--from")
                let to = try Self.time(to, "--to")
                if let output {
                    let partial = output + ".partial"
                    let file = try FileDescriptor.open(
                        FilePath(partial), .writeOnly, options: [.create, .truncate], permissions: [.ownerReadWrite, .groupRead, .otherRead]
                    )
                    _ = try file.closeAfter {
                        try exporter.export(journal, from: from, to: to) { _ = try file.writeAll($0) }
                    }
                    guard rename(partial, output) == 0 else { throw Errno(rawValue: errno) }
                } else {
                    try exporter.export(journal, from: from, to: to) { _ = try FileDescriptor.standardOutput.writeAll($0) }
                }
            } catch {
                Output(json: false).write(error: error)
                throw ExitCode(1)
            }
        }
    }
}
