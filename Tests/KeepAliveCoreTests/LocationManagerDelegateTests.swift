import Foundation
import KeepAliveCore
import LocationKeepAliveMocks
import Testing

/// The CoreLocation-shaped facade.
@Suite(.timeLimit(.minutes(3))) struct LocationManagerDelegateTests {
    final class RecordingDelegate: LocationManagerDelegate {
        let locations = Locked<[Location]>([])
        let errors = Locked<[String]>([])
        let statuses = Locked<[LocationStatus]>([])

        func locationManager(_ manager: LocationManager, didUpdateLocations locations: [Location]) {
            self.locations.withLock { $0 += locations }
        }
        func locationManager(_ manager: LocationManager, didFailWithError error: any Error) {
            errors.withLock { $0.append("\(error)") }
        }
        func locationManager(_ manager: LocationManager, didChangeStatus status: LocationStatus) {
            statuses.withLock { $0.append(status) }
        }
    }

    @Test func startAndStopUpdatingDeliverToTheDelegate() async throws {
        let source = ScriptedLocationSource()
        let manager = LocationManager(source: source)
        let delegate = RecordingDelegate()
        manager.delegate = delegate
        manager.desiredAccuracy = 10
        manager.startUpdatingLocation()
        await source.waitForSessions(1)
        source.sendFix(latitude: 1, longitude: 2, accuracy: 50, at: Date(timeIntervalSince1970: 1))
        source.sendFix(latitude: 3, longitude: 4, accuracy: 5, at: Date(timeIntervalSince1970: 2))
        source.sendNoFix()
        try await waitUntil { delegate.statuses.withLock { $0 } == [.fixLost] }
        #expect(delegate.locations.withLock { $0.map(\.latitude) } == [3])
        manager.stopUpdatingLocation()
        try await waitUntil { source.activeSessions == 0 }
    }

    @Test func requestLocationCallsBackOnceWithTheErrorWhenTheSourceFails() async throws {
        let source = ScriptedLocationSource()
        source.failNextStart(with: LocationError(.gpsdUnreachable, "cannot reach gpsd at localhost:2947"))
        let manager = LocationManager(source: source)
        let delegate = RecordingDelegate()
        manager.delegate = delegate
        manager.requestLocation()
        try await waitUntil { !delegate.errors.withLock { $0 }.isEmpty }
        #expect(delegate.errors.withLock { $0 } == ["cannot reach gpsd at localhost:2947"])
        #expect(delegate.locations.withLock { $0 }.isEmpty)
    }
}
