import ArgumentParser
import FoundationEssentials
import KeepAliveCommands
import KeepAliveDelivery
import KeepAliveJournal
import KeepAliveCore

extension DeliveryOptions: JournalChecked {
    func check() throws {
        for destination in try parsedDestinations() {
            do { try destination.checkCredentials() } catch { throw ValidationError("--deliver \(destination.name): \(error)") }
        }
        _ = try policy()
        guard JournalDurability(named: durability) != nil else {
            throw ValidationError("--durability takes grouped or full (normal, its old name, means grouped)")
        }
        _ = try groupInterval()
        _ = try retention()
    }

    /// `--keep-fixes` and `--keep-for`, checked.
    func retention() throws -> JournalRetention {
        guard keepFixes >= 1 else { throw ValidationError("--keep-fixes takes a number of at least 1") }
        guard let age = Duration(parsing: keepFor), age > .zero else {
            throw ValidationError("--keep-for takes a duration such as 90d or 12h")
        }
        return JournalRetention(maximumAge: age, maximumCount: keepFixes)
    }

    func parsedDestinations() throws -> [Destination] {
        var names = Set<String>()
        return try destinations.map { text in
            guard let equals = text.firstIndex(of: "=") else {
                throw ValidationError("--deliver takes NAME=URL (for example home=mqtt://localhost/owntracks/me/phone)")
            }
            let name = String(text[..<equals])
            guard names.insert(name).inserted else { throw ValidationError("--deliver: the name \(name) is given twice") }
            do {
                return try Destination(name: name, url: String(text[text.index(after: equals)...]))
            } catch {
                throw ValidationError("--deliver: \(error)")
            }
        }
    }

    func policy() throws -> DeliveryPolicy {
        var policy = DeliveryPolicy()
        guard batchThreshold >= 1, batchMax >= 1, maxRefusals >= 1 else {
            throw ValidationError("--batch-threshold, --batch-max and --max-refusals take a number of at least 1")
        }
        guard let latency = Duration(parsing: batchLatency) else {
            throw ValidationError("--batch-latency takes a duration such as 5s or 500ms")
        }
        policy.batchThreshold = batchThreshold
        policy.maximumBatch = batchMax
        policy.maximumLatency = latency
        policy.maximumRefusals = maxRefusals
        guard let lease = Duration(parsing: lease), lease >= .seconds(1) else {
            throw ValidationError("--lease takes a duration of at least 1s")
        }
        policy.leaseDuration = lease
        return policy
    }

    var file: URL { journal.map { URL(fileURLWithPath: $0) } ?? FixJournal.defaultFile }

    /// The journal, to write; `comparesClocks` as ``FixJournal`` takes it (`false` for a replay).
    func openJournal(comparesClocks: Bool = true) throws -> FixJournal {
        try FixJournal(
            file: file, retention: try retention(), durability: JournalDurability(named: durability) ?? .grouped,
            comparesClocks: comparesClocks
        )
    }

    /// `--commit-interval`, checked.
    func groupInterval() throws -> Duration {
        guard let interval = Duration(parsing: commitInterval), interval > .zero, interval <= .seconds(3600) else {
            throw ValidationError("--commit-interval takes a duration from 1ms to 1h, such as 30s")
        }
        return interval
    }

    /// The destinations given, or with none given those the journal already has.
    func destinations(in journal: FixJournal) throws -> [Destination] {
        let given = try parsedDestinations()
        guard given.isEmpty else { return given }
        return try journal.destinations().map { try Destination(name: $0.name, url: $0.settings) }
    }
}
