// The Swift snippets of MonitoringRegionsAndVisits.md, compiled: generated, do not edit. After changing the
// article: scripts/update-snippets

import FoundationEssentials
import KeepAliveCore
import KeepAliveMonitoring
import Testing
import KeepAliveHostProtocol

@MainActor func monitoringRegionsAndVisitsSnippet1() async throws {
    let monitor = try LocationMonitor(named: "places")  // file: URL(fileURLWithPath: "places.json") keeps them across restarts
    let harbour = Coordinate(latitude: 52.850155, longitude: 5.3136167)
    try monitor.add(.circle(center: harbour, radius: 300), identifier: "harbour", assuming: .unsatisfied)
    try monitor.add(.significantChange, identifier: "moves")
    try monitor.add(.visit, identifier: "visits")

    let log = URL(fileURLWithPath: "Mocks/Fixtures/tracks/bundg_zeus_9.log")
    let manager = LocationManager(source: NMEAReplaySource(file: log, speed: 0))  // on a receiver: GPSDSource()
    let events = monitor.events  // made before the watch starts, so no event is missed
    let monitoring = Task { try await monitor.monitor(manager) }
    for await event in events {
        switch event.identifier {
        case "harbour": print(event.state == .satisfied ? "in the harbour" : "out", event.date)
        case "visits": print("visit", event.visit?.arrival as Any, event.visit?.departure as Any)
        default: print("moved to", event.location.latitude, event.location.longitude)
        }
    }
    try await monitoring.value  // why the watch ended, if it failed (gpsd unreachable at the start)
}

@Test(.timeLimit(.minutes(5))) @MainActor func theMonitoringLoopEndsWithTheReplay() async throws {
    try await monitoringRegionsAndVisitsSnippet1()
}

@MainActor func monitoringRegionsAndVisitsSnippet2() async throws {
    func monitorUnderTheHost() async throws {
        let socket = ProcessInfo.processInfo.environment["KEEPALIVE_HOST_SOCKET"] ?? "/run/keepalive-host.sock.apps"
        let host = try HostClient(socket: URL(fileURLWithPath: socket))
        _ = try await host.hello(app: ProcessInfo.processInfo.environment["KEEPALIVE_APP"] ?? "tracker")
        let home = Coordinate(latitude: 52.3731, longitude: 4.8922)
        try await host.monitor(["home": .circle(center: home, radius: 200), "moves": .significantChange], assuming: .unsatisfied)
        for await notice in host.notices {
            guard case .locationEvent(let event, _) = notice else { continue }
            print(event.identifier, event.state, event.date)  // about 10 s to act on it, then frozen again
        }
    }
}
