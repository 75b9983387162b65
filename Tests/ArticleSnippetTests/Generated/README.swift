// The Swift snippets of README.md, compiled: generated, do not edit. After changing the
// article: scripts/update-snippets

import LocationKeepAlive

@MainActor func readmeSnippet1() async throws {
    let manager = LocationManager(source: GPSDSource(host: "localhost", port: 2947))
    for try await update in manager.updates(LocationFilter(desiredAccuracy: 20, distanceFilter: 5)) {
        if case .location(let fix) = update { print(fix.latitude, fix.longitude, fix.horizontalAccuracy ?? .nan) }
    }
    let here = try await manager.requestLocation(desiredAccuracy: 50, maximumAge: .seconds(10), timeout: .seconds(15))
    print(here.latitude, here.longitude)
}
