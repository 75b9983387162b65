import Foundation
import CProcessControl
import Glibc
@testable import KeepAliveCore
import LocationKeepAliveMocks
import Testing
import TestWaiting

/// The decoder reading a log piece by piece gives what it gives with the whole log in memory,
/// wherever the pieces end; and a stream with nothing yet is a wait, not the end.
@Suite struct NMEAStreamingTests {
    private func decodeAll(_ decoder: inout NMEADecoder) -> [FixReport] {
        var reports: [FixReport] = []
        while let report = decoder.next() { reports.append(report) }
        return reports
    }

    @Test(arguments: [1, 7, 83, 4096, 65_536])
    func piecesOfAnySizeDecodeLikeTheWholeLog(chunk: Int) throws {
        for fixture in NMEAFixture.all + NMEAFixture.madeUp {
            var whole = NMEADecoder(bytes: try fixture.bytes(), device: fixture.name)
            var pieces = NMEADecoder(input: try NMEAInput(file: fixture.url), device: fixture.name, chunk: chunk)
            let expected = decodeAll(&whole)
            let streamed = decodeAll(&pieces)
            #expect(streamed == expected, "\(fixture) in pieces of \(chunk)")
            #expect(pieces.statistics == whole.statistics, "\(fixture) in pieces of \(chunk)")
        }
    }

    @Test func aPipeWithNothingYetIsAWaitAndItsEndIsTheEnd() async throws {
        var ends: [Int32] = [0, 0]
        // Close-on-exec: a process another test spawns meanwhile must not keep the write end
        // open, or its close is no end (the main step of a fresh clone: 29 reports of 30).
        #expect(cprocess_pipe(&ends, 0) == 0)
        defer { close(ends[0]) }
        let input = try NMEAInput(file: URL(fileURLWithPath: "/proc/self/fd/\(ends[0])"))
        #expect(input.isStream)
        var decoder = NMEADecoder(input: input, device: "pipe")
        #expect(decoder.next() == nil)
        #expect(decoder.isWaitingForInput)

        let log = try NMEAFixture.mt3339.bytes()
        var reports: [FixReport] = []
        for start in stride(from: 0, to: log.count, by: 500) {
            let piece = Array(log[start..<min(start + 500, log.count)])
            #expect(piece.withUnsafeBytes { write(ends[1], $0.baseAddress, $0.count) } == piece.count)
            while let report = decoder.next() { reports.append(report) }
            #expect(decoder.isWaitingForInput, "a pipe still open is never the end")
        }
        close(ends[1])
        // The end comes once no process holds the write end: one another test spawns at this
        // moment holds a copy from its fork to its exec (close-on-exec closes it only then),
        // which a loaded machine stretches (the main step beside a busy loop: 29 reports of 30,
        // the decoder still waiting). The kernel says when the last writer is gone (POLLHUP).
        let readEnd = ends[0]
        try await waitUntil("the pipe's last writer gone") {
            var poll = pollfd(fd: readEnd, events: 0, revents: 0)
            return Glibc.poll(&poll, 1, 0) == 1 && poll.revents & Int16(POLLHUP) != 0
        }
        while let report = decoder.next() { reports.append(report) }
        #expect(!decoder.isWaitingForInput)
        var whole = NMEADecoder(bytes: log, device: "pipe")
        #expect(reports == decodeAll(&whole))
        #expect(reports.compactMap(\.location).count == 30)
    }

    @Test func refusalsSayTheRealReason() throws {
        #expect(throws: LocationError.self) { try NMEAInput(file: URL(fileURLWithPath: "/no/such/log")) }
        do {
            _ = try NMEAInput(file: URL(fileURLWithPath: "/tmp"))
            Issue.record("a directory was opened as a log")
        } catch {
            #expect(error.message.contains("directory"))
        }
        let null = try NMEAInput(file: URL(fileURLWithPath: "/dev/null"))
        var decoder = NMEADecoder(input: null)
        #expect(decoder.next() == nil)
        #expect(!decoder.isWaitingForInput)
        #expect(decoder.statistics.sentences == 0)
    }
}
