// The Swift snippets of MonitoringRegionsAndVisits.md, compiled: generated, do not edit. After changing the
// article: scripts/update-snippets

import FoundationEssentials
import KeepAliveCore
import KeepAliveMonitoring
import KeepAliveHost

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

@MainActor func monitoringRegionsAndVisitsSnippet2() async throws {
    func monitorUnderTheHost() async throws {
        let socket = ProcessInfo.processInfo.environment["KEEPALIVE_HOST_SOCKET"] ?? "/run/keepalive-host.sock.apps"
        let host = try HostClient(socket: URL(fileURLWithPath: socket))
        _ = try await host.hello(app: ProcessInfo.processInfo.environment["KEEPALIVE_APP"] ?? "tracker")
        let home = Coordinate(latitude: 52.3731, longitude: 4.8922)
        try await host.monitor(["home": .circle(center: home, radius: 200), "moves": .significantChange], assuming: .unsatisfied)
        for await notice in host.notices where notice.notice == .locationEvent {
            guard let event = notice.monitorEvent else { continue }
            print(event.identifier, event.state, event.date)  // about 10 s to act on it, then frozen again
        }
    }
}
