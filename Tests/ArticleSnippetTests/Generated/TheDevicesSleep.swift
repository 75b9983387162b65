// The Swift snippets of TheDevicesSleep.md, compiled: generated, do not edit. After changing the
// article: scripts/update-snippets

import FoundationEssentials
import LocationKeepAlive
import Testing

@MainActor func theDevicesSleepSnippet1() async throws {
    let log = URL(fileURLWithPath: "Mocks/Fixtures/nmea/ublox-8.log")
    let manager = LocationManager(source: NMEAReplaySource(file: log, speed: 0))  // on a receiver: GPSDSource()
    let sleep = Task {
        // Until cancelled; on a system with neither logind nor wakelocks it says so and returns.
        try await DeviceSleepKeeper.follow(manager) { notice in print(notice) }
    }
    for try await case .location(let fix) in manager.updates() {
        print(fix.latitude, fix.longitude)  // the tracker's own work: journal, deliver
    }
    sleep.cancel()
}

@Test(.timeLimit(.minutes(5))) @MainActor func aTrackerFollowsTheDevicesSleep() async throws {
    try await theDevicesSleepSnippet1()
}
