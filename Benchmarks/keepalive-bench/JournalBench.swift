import Foundation
import LocationKeepAlive

/// The journal and delivery figures (`scripts/bench-journal`). Each prints one line:
/// `<name> <count> <seconds> <cpu seconds> <per second>`.
enum JournalBench {
    static func sample(_ index: Int) -> Location {
        Location(
            latitude: 44.068 + Double(index % 1000) * 1e-6, longitude: -121.314, altitudeMSL: 1145.2, horizontalAccuracy: 4.1,
            verticalAccuracy: 6.2, speed: 1.2, course: 90.5, timestamp: Date(timeIntervalSince1970: 1_700_000_000 + Double(index)),
            mode: .threeDimensional, satellitesUsed: 11
        )
    }

    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    static func report(_ name: String, _ count: Int, since start: ContinuousClock.Instant, cpu: Double) {
        let elapsed = start.duration(to: .now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print("\(name) \(count) \(seconds) \(cpuSeconds() - cpu) \(Double(count) / seconds)")
    }

    /// `journal-append PATH COUNT full|batch`: one durable transaction a fix (as the service
    /// appends in `--durability full`), or batches of 100 (as in `grouped`).
    static func append(path: String, count: Int, mode: String) throws {
        let journal = try FixJournal(file: URL(fileURLWithPath: path), battery: { nil })
        let cpu = cpuSeconds()
        let start = ContinuousClock.now
        if mode == "batch" {
            for first in stride(from: 0, to: count, by: 100) {
                try journal.append(contentsOf: (first..<min(count, first + 100)).map(sample))
            }
        } else {
            for index in 0..<count { try journal.append(sample(index)) }
        }
        report("append-\(mode)", count, since: start, cpu: cpu)
    }

    /// `deliver PATH DESTINATION-URL COUNT`: COUNT fixes journaled one at a time (durable, as
    /// the service does), then delivered to the destination until its queue is empty
    /// (batches of 100). Two lines: `journal ...` and `deliver-<scheme> ...`.
    static func deliver(path: String, url: String, count: Int) async throws {
        let journal = try FixJournal(file: URL(fileURLWithPath: path), battery: { nil })
        let appendCPU = cpuSeconds()
        let appendStart = ContinuousClock.now
        for index in 0..<count { try journal.append(sample(index)) }
        report("journal", count, since: appendStart, cpu: appendCPU)
        let destination = try Destination(name: "bench", url: url)
        var policy = DeliveryPolicy()
        policy.batchThreshold = 1
        policy.maximumBatch = 100
        let delivery = try JournalDelivery(journal: journal, destinations: [destination], policy: policy, watchesNetwork: false)
        let cpu = cpuSeconds()
        let start = ContinuousClock.now
        let task = Task { await delivery.run() }
        let last = Int64(count)
        while try journal.status(of: "bench").deliveredThrough < last { try await Task.sleep(for: .milliseconds(5)) }
        report("deliver-\(url.prefix(while: { $0 != ":" }))", count, since: start, cpu: cpu)
        task.cancel()
        await task.value
    }

    /// `fleet PORT TRACKERS SECONDS RATE FOLDER [FIRST]`: TRACKERS trackers (numbered from FIRST),
    /// each its own journal and
    /// MQTT connection, each appending RATE fixes a second for SECONDS, delivering to one
    /// broker; writes `FOLDER/sent.txt` (`id8 tst recordedAt`) for the delay figures.
    static func fleet(port: Int, trackers: Int, seconds: Int, rate: Double, folder: String, first: Int = 0) async throws {
        var deliveries: [JournalDelivery] = []
        var policy = DeliveryPolicy()
        policy.batchThreshold = 1
        policy.maximumBatch = 50
        for tracker in first..<(first + trackers) {
            let journal = try FixJournal(file: URL(fileURLWithPath: "\(folder)/t\(tracker).sqlite"), battery: { nil })
            let destination = try Destination(name: "fleet", url: "mqtt://127.0.0.1:\(port)/owntracks/fleet/t\(tracker)")
            deliveries.append(try JournalDelivery(journal: journal, destinations: [destination], policy: policy, watchesNetwork: false))
        }
        let tasks = deliveries.map { delivery in Task { await delivery.run() } }
        let sent = Locked([String]())
        let cpu = cpuSeconds()
        let start = ContinuousClock.now
        let interval = Duration.seconds(1 / rate)
        await withDiscardingTaskGroup { group in
            for (offset, delivery) in deliveries.enumerated() {
                let tracker = first + offset
                group.addTask {
                    // Trackers start spread over one interval, as a fleet would.
                    try? await Task.sleep(for: interval * Double(offset) / Double(trackers))
                    var next = ContinuousClock.now
                    for index in 0..<Int(Double(seconds) * rate) {
                        if let record = try? delivery.journal.append(sample(tracker * 100_000 + index)) {
                            let tst = Int(record.location.timestamp!.timeIntervalSince1970)
                            let line = "\(record.shortID) \(tst) \(record.recordedAt.timeIntervalSince1970)"
                            sent.withLock { $0.append(line) }
                        }
                        next = next.advanced(by: interval)
                        try? await Task.sleep(until: next)
                    }
                }
            }
        }
        var depth = 1
        while depth > 0 {
            try await Task.sleep(for: .milliseconds(50))
            depth = try deliveries.reduce(0) { $0 + (try $1.journal.status(of: "fleet").depth) }
            if start.duration(to: .now) > .seconds(seconds + 120) { break }
        }
        let lines = sent.withLock { $0 }
        report("fleet", lines.count, since: start, cpu: cpu)
        print("fleet-undelivered \(depth)")
        try (lines.joined(separator: "\n") + "\n").write(toFile: "\(folder)/sent.txt", atomically: true, encoding: .utf8)
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
    }
}
