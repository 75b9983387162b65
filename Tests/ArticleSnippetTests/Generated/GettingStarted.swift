// The Swift snippets of GettingStarted.md, compiled: generated, do not edit. After changing the
// article: scripts/update-snippets

import LocationKeepAlive
import FoundationEssentials
import Testing

@MainActor func gettingStartedSnippet1() async throws {
    let manager = LocationManager(source: GPSDSource(host: "localhost", port: 2947))

    // Continuous: fixes better than 20 m, at least 5 m apart, until you stop iterating.
    for try await update in manager.updates(LocationFilter(desiredAccuracy: 20, distanceFilter: 5)) {
        switch update {
        case .location(let fix): print(fix.latitude, fix.longitude, fix.horizontalAccuracy ?? .nan)
        case .status(let status): print("#", status)  // connected, fix lost, connection lost, reconnecting...
        }
    }

    // One-shot: shares the running watch if there is one; fails with the best fix seen at the
    // timeout, and the rule that turned it down. From cold, gpsd's current fix comes at once
    // (`?POLL`, used only when at most 2 s old on the receiver's clock, as every fix is aged).
    let here = try await manager.requestLocation(desiredAccuracy: 50, maximumAge: .seconds(10), timeout: .seconds(15))
    print(here.latitude, here.longitude)

    // The cheapest way to consume: a handler on gpsd's reader thread, no hop per fix (it must not
    // block). Returns when the task is cancelled or a replay ends; throws if gpsd cannot be reached.
    try await manager.updates(LocationFilter(desiredAccuracy: 20)) { update in
        if case .location(let fix) = update { print(fix.latitude, fix.longitude) }
    }
}

@MainActor func gettingStartedSnippet2() async throws {
    @MainActor final class Tracker: LocationManagerDelegate {
        let manager = LocationManager(source: GPSDSource())

        func start() {
            manager.delegate = self
            manager.desiredAccuracy = LocationFilter.bestAccuracy  // kCLLocationAccuracyBest: every fix
            manager.startUpdatingLocation()
        }

        func locationManager(_ manager: LocationManager, didUpdateLocations locations: [Location]) {
            print(locations.map(\.latitude))  // on the main actor
        }

        func locationManager(_ manager: LocationManager, didFailWithError error: any Error) {
            print("location failed:", error)
        }
    }

    let tracker = Tracker()
    tracker.start()
}

@MainActor func gettingStartedSnippet3() async throws {
    let log = URL(fileURLWithPath: "Mocks/Fixtures/nmea/ublox-8.log")  // in this repository
    let replay = NMEAReplaySource(file: log, speed: 10)  // 10 times as fast as recorded; speed 0: no waits
    let manager = LocationManager(source: replay)
    let fix = try await manager.requestLocation(desiredAccuracy: 50, maximumAge: .seconds(10), timeout: .seconds(15))
    print(fix.timestamp ?? .distantPast)  // 2017-01-10 00:09:41 +0000: the log's time, fresh on its clock
}

@Test(.timeLimit(.minutes(5))) @MainActor func aReplayOfAnOldLogAnswersAMaximumAge() async throws {
    try await gettingStartedSnippet3()
}
