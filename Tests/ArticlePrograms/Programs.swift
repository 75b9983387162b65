// The articles' complete programs (`<!-- program: NAME -->`), as printed: generated, do
// not edit. After changing an article: scripts/update-snippets

import LocationKeepAlive

/// JournalingAndDelivery.md
@MainActor func journalingTracker() async throws {
    let journal = try FixJournal(file: FixJournal.defaultFile)
    let delivery = try JournalDelivery(
        journal: journal,
        destinations: [try Destination(name: "home", url: "mqtt://localhost/owntracks/me/phone")]
    )
    let manager = LocationManager(source: GPSDSource())
    // Until Ctrl-C or SIGTERM (or the loop's end); then what waits is delivered, for up to 5 s.
    let undelivered = try await delivery.run(until: .interrupt) {
        for try await case .location(let fix) in manager.updates() {
            try journal.append(fix)                   // durable when it returns; delivery wakes
        }
    }
    print(undelivered.isEmpty ? "every fix delivered" : "still waiting for \(undelivered): sent at the next start")
}

/// JournalingAndDelivery.md
@MainActor func durableTracker() async throws {
    let journal = try FixJournal(file: FixJournal.defaultFile)
    // Says each commit, and a disk that is full or read-only: the fixes then held, not lost.
    let writer = JournalWriter(journal: journal, durability: .grouped) { report in print(report) }
    let delivery = try JournalDelivery(
        journal: journal,
        destinations: [try Destination(name: "home", url: "mqtt://localhost/owntracks/me/phone")],
        writer: writer
    )
    let manager = LocationManager(source: GPSDSource())
    // With a writer, the run commits its groups too; the stop stores what it holds, then delivers.
    let undelivered = try await delivery.run(until: .interrupt) {
        for try await case .location(let fix) in manager.updates() {
            writer.record(fix)                        // never throws; sent now, stored with its group
        }
    }
    print(writer.tally)                               // stored 1204, held 0
    print(undelivered.isEmpty ? "every fix delivered" : "still waiting for \(undelivered): sent at the next start")
}

/// Each program by its name in the article.
let articlePrograms: [String: @MainActor () async throws -> Void] = [
    "journaling-tracker": journalingTracker,
    "durable-tracker": durableTracker,
]
