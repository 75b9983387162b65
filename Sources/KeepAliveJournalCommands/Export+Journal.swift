import ArgumentParser
import FoundationEssentials
import KeepAliveCommands
import KeepAliveJournal
import SystemPackage
import KeepAliveCore

extension KeepAlive.Export: JournalBacked {
    func check() throws {
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

    func perform() throws {
        let exporter = TrackExporter(format: TrackFormat(rawValue: format)!, segmentGap: Duration(parsing: segmentGap)!)
        do {
            let journal = try FixJournal(file: journal.map { URL(fileURLWithPath: $0) } ?? FixJournal.defaultFile, access: .readOnly)
            let from = try Self.time(from, "--from")
            let to = try Self.time(to, "--to")
            if let output {
                try exporter.export(journal, from: from, to: to, into: URL(fileURLWithPath: output))
            } else {
                try exporter.export(journal, from: from, to: to) { _ = try FileDescriptor.standardOutput.writeAll($0) }
            }
        } catch {
            Output(json: false).write(error: error)
            throw ExitCode(1)
        }
    }
}
