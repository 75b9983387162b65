import Foundation
import LocationKeepAlive

/// Benchmarks that print figures (never timed tests): `keepalive-bench parse FILE [RUNS]`.
///
/// Prints one line: `parse <sentences> <median s> <min s> <max s>` for a full native decode
/// (scan, checksum, fields, epochs) of the file held in memory, `RUNS` times (default 5).
@main
struct Bench {
    static func main() throws {
        let arguments = CommandLine.arguments.dropFirst()
        guard arguments.first == "parse", let path = arguments.dropFirst().first else {
            FileHandle.standardError.write(Data("usage: keepalive-bench parse FILE [RUNS]\n".utf8))
            exit(64)
        }
        let runs = arguments.dropFirst(2).first.flatMap { Int($0) } ?? 5
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let clock = ContinuousClock()
        var times: [Double] = []
        var sentences = 0
        var reports = 0
        for _ in 0..<runs {
            let started = clock.now
            var decoder = NMEADecoder(bytes: bytes)
            var count = 0
            while decoder.next() != nil { count += 1 }
            times.append((clock.now - started).seconds)
            sentences =
                decoder.statistics.sentences + decoder.statistics.badChecksums
                + decoder.statistics.missingChecksums + decoder.statistics.malformed
            reports = count
        }
        times.sort()
        print("parse \(sentences) \(times[times.count / 2]) \(times[0]) \(times[times.count - 1]) reports=\(reports)")
    }
}
