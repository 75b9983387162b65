import Foundation
import LocationKeepAlive

/// Benchmarks that print figures (never timed tests).
///
/// - `keepalive-bench parse FILE [RUNS]`: one line, `parse <sentences> <median s> <min s> <max s>`,
///   for a full native decode (scan, checksum, fields, epochs) of the file held in memory.
/// - `journal-append`, `deliver`, `fleet`: the journal and delivery figures (`JournalBench`).
/// - `monitor [FIXES]`: condition evaluation per fix with 10, 1,000 and 100,000 regions (`MonitorBench`).
/// - `keepalive-bench oneshot HOST:PORT [RUNS]`: `requestLocation` latency against a gpsd that
///   already has a fix, cold and warm, one line each: `oneshot-<kind> <median ms> <min ms> <max ms>`.
@main
struct Bench {
    static func main() async throws {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let runs = arguments.dropFirst(2).first.flatMap { Int($0) } ?? 5
        switch (arguments.first, arguments.dropFirst().first) {
        case ("parse", let path?): try parse(path, runs: runs)
        case ("oneshot", let address?): try await oneShot(address, runs: runs)
        case ("monitor", let fixes): try MonitorBench.run(fixes: fixes.flatMap { Int($0) } ?? 2_000)
        case ("journal-append", let path?):
            try JournalBench.append(path: path, count: runs, mode: arguments.dropFirst(3).first ?? "full")
        case ("deliver", let path?):
            try await JournalBench.deliver(path: path, url: arguments[2], count: Int(arguments[3]) ?? 10_000)
        case ("fleet", let port?):
            let numbers = arguments.dropFirst(2).prefix(3).compactMap { Double($0) }
            try await JournalBench.fleet(
                port: Int(port) ?? 1883, trackers: Int(numbers[0]), seconds: Int(numbers[1]), rate: numbers[2],
                folder: arguments[5], first: arguments.count > 6 ? Int(arguments[6]) ?? 0 : 0
            )
        default:
            FileHandle.standardError.write(
                Data(
                    ("usage: keepalive-bench parse FILE [RUNS] | oneshot HOST:PORT [RUNS] | monitor [FIXES] | journal-append PATH COUNT full|normal|batch"
                        + " | deliver PATH URL COUNT | fleet PORT TRACKERS SECONDS RATE FOLDER\n").utf8
                )
            )
            exit(64)
        }
    }

    static func parse(_ path: String, runs: Int) throws {
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

    /// Cold: a new manager and connection each time (gpsd answers `?POLL` with its fix).
    /// Warm: a watch is running and the request takes its fix (`maximumAge` 2 s); without a
    /// `maximumAge` it would wait for the receiver's next fix, which measures the receiver.
    static func oneShot(_ address: String, runs: Int) async throws {
        let parts = address.split(separator: ":")
        guard parts.count == 2, let port = Int(parts[1]) else { throw CocoaError(.formatting) }
        let source = GPSDSource(host: String(parts[0]), port: port)
        let clock = ContinuousClock()
        func measure(_ body: () async throws -> Void) async throws -> [Double] {
            var times: [Double] = []
            for _ in 0..<runs {
                let started = clock.now
                try await body()
                times.append((clock.now - started).seconds * 1000)
            }
            return times.sorted()
        }
        let cold = try await measure {
            _ = try await LocationManager(source: source).requestLocation(timeout: .seconds(5))
        }
        let manager = LocationManager(source: source)
        let watch = Task { try await manager.updates { _ in } }
        _ = try await manager.requestLocation(timeout: .seconds(5))
        let cached = try await measure {
            _ = try await manager.requestLocation(maximumAge: .seconds(2), timeout: .seconds(5))
        }
        watch.cancel()
        for (kind, times) in [("cold", cold), ("warm", cached)] {
            print("oneshot-\(kind) \(times[times.count / 2]) \(times[0]) \(times[times.count - 1])")
        }
    }
}
