import Foundation
import KeepAliveJournal
import Testing

/// A journal exported to a file in one call: the whole track or nothing.
@Suite struct TrackFileExportTests {
    let folder = TemporaryFolder()
    let start = Date(timeIntervalSince1970: 1_700_000_000)

    private func journal(fixes: Int) throws -> FixJournal {
        let journal = try FixJournal(file: URL(fileURLWithPath: folder.file("j.sqlite")))
        try journal.append(contentsOf: (0..<fixes).map { fix($0, at: start + Double($0)) })
        return journal
    }

    private var partials: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { $0.hasSuffix(".partial") }
    }

    @Test func oneCallWritesTheWholeTrack() throws {
        let file = URL(fileURLWithPath: folder.file("track.gpx"))
        #expect(try journal(fixes: 12).export(.gpx, to: file) == 12)
        let gpx = try String(contentsOf: file, encoding: .utf8)
        #expect(gpx.components(separatedBy: "<trkpt ").count - 1 == 12)
        #expect(gpx.hasSuffix("</trk>\n</gpx>\n"))
        #expect(partials.isEmpty)
    }

    @Test func aTimeRangeLimitsTheTrack() throws {
        let file = URL(fileURLWithPath: folder.file("range.geojson"))
        #expect(try journal(fixes: 12).export(.geojson, to: file, from: start + 3, until: start + 5) == 3)
    }

    @Test func aFailedExportLeavesTheEarlierFileAndNoPartOfTheNewOne() throws {
        let journal = try journal(fixes: 3)
        // The target is a folder holding something: the rename fails once the track is written.
        let target = URL(fileURLWithPath: folder.file("taken"))
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: false)
        try Data("keep".utf8).write(to: target.appendingPathComponent("inside"))
        let error = try #require(#expect(throws: TrackExportError.self) { try journal.export(.gpx, to: target) })
        #expect(error.description.hasPrefix("cannot write the track to \(target.path): "))
        #expect(try String(contentsOf: target.appendingPathComponent("inside"), encoding: .utf8) == "keep")
        #expect(partials.isEmpty)
    }

    @Test func aMissingFolderIsNamed() throws {
        let file = URL(fileURLWithPath: folder.file("no/such/folder/track.gpx"))
        let error = try #require(#expect(throws: TrackExportError.self) { try journal(fixes: 1).export(.gpx, to: file) })
        #expect(error.description.contains("no/such/folder/track.gpx.partial"))
        #expect(error.description.contains("No such file or directory"))
    }
}
