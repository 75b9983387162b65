// The Swift snippets of JournalingAndDelivery.md, compiled: generated, do not edit. After changing the
// article: scripts/update-snippets

import FoundationEssentials
import LocationKeepAlive

@MainActor func journalingAndDeliverySnippet3() async throws {
    let journal = try FixJournal(file: FixJournal.defaultFile)
    let count = try journal.export(.gpx, to: URL(fileURLWithPath: "last-day.gpx"), from: Date.now.addingTimeInterval(-86_400))
    print("\(count) records in last-day.gpx")  // fixes, and events as waypoints; 0: none of the last day
}
