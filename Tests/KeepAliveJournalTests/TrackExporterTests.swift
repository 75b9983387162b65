import Foundation
import FoundationXML
import KeepAliveJournal
import Testing

/// Export: well-formed in every format, GPX segments split at gaps, constant memory by pages.
@Suite struct TrackExporterTests {
    /// Counts elements by name with Foundation's XML parser (which fails on malformed input).
    final class ElementCounter: NSObject, XMLParserDelegate {
        var counts: [String: Int] = [:]
        func parser(
            _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            counts[name, default: 0] += 1
        }
    }

    func export(_ journal: FixJournal, _ format: TrackFormat, gap: Duration = .seconds(300)) throws -> String {
        var bytes: [UInt8] = []
        try TrackExporter(format: format, segmentGap: gap).export(journal) { bytes += $0 }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func gpxIsWellFormedWithANewSegmentAfterAGap() throws {
        let folder = TemporaryFolder()
        let journal = try FixJournal(file: URL(fileURLWithPath: folder.file("j.sqlite")))
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        try journal.append(contentsOf: (0..<5).map { fix($0, at: start + Double($0)) })
        try journal.append(contentsOf: (5..<8).map { fix($0, at: start + 600 + Double($0)) })  // 10 min later
        let gpx = try export(journal, .gpx)
        let counter = ElementCounter()
        let parser = XMLParser(data: Data(gpx.utf8))
        parser.delegate = counter
        #expect(parser.parse(), "\(parser.parserError.map { "\($0)" } ?? "")")
        #expect(counter.counts["trk"] == 1 && counter.counts["trkseg"] == 2 && counter.counts["trkpt"] == 8)
        #expect(counter.counts["keepalive:speed"] == 8 || counter.counts["speed"] == 8)
        #expect(gpx.contains(#"<trkpt lat="52.0000000" lon="4.0000000"><ele>10.50</ele><time>2023-11-14T22:13:20.000Z</time>"#))
    }

    @Test func aSleepTheJournalMarkedStartsANewSegmentHoweverShort() throws {
        let folder = TemporaryFolder()
        let journal = try FixJournal(file: URL(fileURLWithPath: folder.file("j.sqlite")))
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        try journal.append(contentsOf: (0..<3).map { fix($0, at: start + Double($0)) })
        // 40 s asleep: far below the 300 s a gap in time alone needs.
        try journal.recordGap(from: start + 3, to: start + 43, reason: "asleep")
        try journal.append(contentsOf: (3..<5).map { fix($0, at: start + 40 + Double($0)) })
        try journal.recordGap(from: start + 45, to: start + 50, reason: "asleep")  // after the last fix: no segment yet
        let gpx = try export(journal, .gpx)
        let counter = ElementCounter()
        let parser = XMLParser(data: Data(gpx.utf8))
        parser.delegate = counter
        #expect(parser.parse())
        #expect(counter.counts["trkseg"] == 2 && counter.counts["trkpt"] == 5)
        #expect(try journal.gaps().map(\.afterSequence) == [3, 5])
        #expect(try journal.gaps().first?.end == start + 43)
    }

    @Test func anEmptyJournalStillGivesWellFormedDocuments() throws {
        let folder = TemporaryFolder()
        let journal = try FixJournal(file: URL(fileURLWithPath: folder.file("j.sqlite")))
        let parser = XMLParser(data: Data(try export(journal, .gpx).utf8))
        #expect(parser.parse())
        let geojson = try JSONSerialization.jsonObject(with: Data(try export(journal, .geojson).utf8)) as? [String: Any]
        #expect((geojson?["features"] as? [Any])?.isEmpty == true)
        #expect(try export(journal, .ndjson).isEmpty)
        #expect(try export(journal, .csv).split(separator: "\n").count == 1)
    }

    @Test func geoJSONNDJSONAndCSVCarryEveryFix() throws {
        let folder = TemporaryFolder()
        let journal = try FixJournal(file: URL(fileURLWithPath: folder.file("j.sqlite")))
        try journal.append(contentsOf: (0..<2500).map { fix($0) })  // more than one page
        let geojson = try JSONSerialization.jsonObject(with: Data(try export(journal, .geojson).utf8)) as? [String: Any]
        let features = geojson?["features"] as? [[String: Any]] ?? []
        #expect(features.count == 2500)
        let coordinates = (features.first?["geometry"] as? [String: Any])?["coordinates"] as? [Double]
        #expect(coordinates == [4, 52, 10.5])
        let lines = try export(journal, .ndjson).split(separator: "\n")
        #expect(lines.count == 2500)
        let last = try JSONSerialization.jsonObject(with: Data(lines.last!.utf8)) as? [String: Any]
        #expect(last?["sequence"] as? Int == 2500 && last?["speed"] as? Double == 10)
        let csv = try export(journal, .csv).split(separator: "\n")
        #expect(csv.count == 2501 && csv[1].split(separator: ",", omittingEmptySubsequences: false).count == 16, "with the event and state columns")
    }
}
