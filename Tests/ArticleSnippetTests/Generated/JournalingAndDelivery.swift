// The Swift snippets of JournalingAndDelivery.md, compiled: generated, do not edit. After changing the
// article: scripts/update-snippets

import LocationKeepAlive
import Foundation

@MainActor func journalingAndDeliverySnippet1() async throws {
    let journal = try FixJournal(file: FixJournal.defaultFile)
    let delivery = try JournalDelivery(
        journal: journal,
        destinations: [try Destination(name: "home", url: "mqtt://localhost/owntracks/me/phone")]
    )
    Task { await delivery.run() }                 // until cancelled
    let manager = LocationManager(source: GPSDSource())
    for try await case .location(let fix) in manager.updates() {
        try journal.append(fix)                   // durable when it returns; delivery wakes
    }
}

@MainActor func journalingAndDeliverySnippet2() async throws {
    let journal = try FixJournal(file: FixJournal.defaultFile)
    let count = try journal.export(.gpx, to: URL(fileURLWithPath: "last-day.gpx"), from: Date.now.addingTimeInterval(-86_400))
    print("\(count) records in last-day.gpx")  // fixes, and events as waypoints; 0: none of the last day
}
