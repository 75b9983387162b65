// The Swift snippets of MonitoringRegionsAndVisits.md, compiled: generated, do not edit. After changing the
// article: scripts/update-snippets

import FoundationEssentials
import KeepAliveCore
import KeepAliveMonitoring

@MainActor func monitoringRegionsAndVisitsSnippet1() async throws {
    func watchPlaces() async throws {
        let monitor = try LocationMonitor(named: "places", file: URL(fileURLWithPath: "places.json"))
        let home = Coordinate(latitude: 52.3731, longitude: 4.8922)
        try monitor.add(.circle(center: home, radius: 150), identifier: "home", assuming: .unsatisfied)
        try monitor.add(.significantChange, identifier: "moves")
        try monitor.add(.visit, identifier: "visits")

        let manager = LocationManager(source: GPSDSource())
        let monitoring = Task { try await monitor.monitor(manager) }
        for await event in monitor.events {
            switch event.identifier {
            case "home": print(event.state == .satisfied ? "home" : "out", event.date)
            case "visits": print("visit", event.visit?.arrival as Any, event.visit?.departure as Any)
            default: print("moved to", event.location.latitude, event.location.longitude)
            }
        }
        monitoring.cancel()
    }
}
