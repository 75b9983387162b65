package import Foundation
package import LocationKeepAliveMocks
package import Subprocess
import SystemPackage

/// A real gpsd fed one log by `scripts/gpsfake-gated`, holding the feed until our clients
/// are attached, and telling afterwards every TPV gpsd reported (its own watcher saw them).
package struct GatedGPSD {
    package let port: Int
    private let writer: StandardInputWriter
    private let lines: Lines

    /// Starts gpsd with the log, runs `body` with it, and stops gpsd whatever happens.
    /// `cycle`: the seconds between two sentences of the feed.
    package static func run<R: Sendable>(log: URL, cycle: Double = 0.005, _ body: (GatedGPSD) async throws -> R) async throws -> R {
        try Tools.requireGPSD()
        // The helper's own guard against a parent that vanished without closing its input: far
        // beyond any test's time limit, which is what calls a hang. (It was 90 s: a loaded TSan
        // run fed the 5,007 sentences of a log in more, and the helper ended mid-feed.)
        let guardSeconds = Tools.bound(.seconds(900)).components.seconds
        let configuration = Configuration(
            executable: .path("/usr/bin/python3"),
            arguments: [Tools.gatedGPSFake.path, "--gate", "--timeout", "\(guardSeconds)", "--cycle", "\(cycle)", log.path],
            platformOptions: isolatedOptions()
        )
        let result = try await Subprocess.run(
            configuration,
            input: .inputWriter,
            output: .sequence,
            error: .discarded
        ) { execution in
            let lines = Lines(execution.standardOutput.strings().makeAsyncIterator())
            let ready = try await lines.next()
            guard let ready, ready.hasPrefix("READY "), let port = Int(ready.split(separator: " ")[1]) else {
                throw ToolMissing("gpsfake-gated did not start gpsd: \(ready ?? "no output")")
            }
            let gpsd = GatedGPSD(port: port, writer: execution.standardInputWriter, lines: lines)
            do {
                let value = try await body(gpsd)
                try? await gpsd.stop()
                return value
            } catch {
                try? await gpsd.stop()
                await execution.teardown(using: [])
                throw error
            }
        }
        return result.closureResult
    }

    /// Waits until gpsd has answered the `?WATCH` of `count` clients that are still attached (its
    /// own watcher's among them), as gpsd's own log tells the helper: such a client gets the
    /// log's first report, even one that prints nothing until its first fix. (A connection the
    /// kernel lists is not enough: gpsd may read its `?WATCH` after the first sentences.)
    package func waitForWatchers(_ count: Int) async throws -> Bool {
        _ = try await writer.write("WATCHERS \(count)\n")
        guard let answer = try await lines.next(), answer.hasPrefix("WATCHERS "), let watching = Int(answer.dropFirst(9))
        else { throw ToolMissing("gpsfake-gated did not answer WATCHERS") }
        return watching >= count
    }

    /// Starts the feed; every client must be watching already.
    package func go() async throws { _ = try await writer.write("GO\n") }

    /// Waits until the whole log was fed and drained, and returns gpsd's own reports.
    package func reports() async throws -> [GPSDTPV] {
        var reports: [GPSDTPV] = []
        while let line = try await lines.next() {
            if line.hasPrefix("TPV ") {
                reports.append(try JSONDecoder().decode(GPSDTPV.self, from: Data(line.dropFirst(4).utf8)))
            } else if line.hasPrefix("DONE ") {
                return reports
            }
        }
        throw ToolMissing("gpsfake-gated ended before the log was fed")
    }

    private func stop() async throws {
        _ = try await writer.write("STOP\n")
        try await writer.finish()
    }

    /// The helper's output, read by one task at a time.
    package final class Lines: @unchecked Sendable {
        // Used only by the test task that runs the gated session, one call at a time.
        private var iterator: SubprocessOutputSequence.StringSequence<UTF8>.AsyncIterator
        package init(_ iterator: SubprocessOutputSequence.StringSequence<UTF8>.AsyncIterator) { self.iterator = iterator }
        package func next() async throws -> String? { try await iterator.next() }
    }
}
