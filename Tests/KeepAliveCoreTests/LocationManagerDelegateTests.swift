import Foundation
import KeepAliveCore
import LocationKeepAliveMocks
import Testing

/// Marks the main queue, so a callback can tell it runs there without trapping.
private let mainQueueMark: DispatchSpecificKey<Bool> = {
    let key = DispatchSpecificKey<Bool>()
    DispatchQueue.main.setSpecific(key: key, value: true)
    return key
}()

/// The CoreLocation-shaped facade.
@Suite(.timeLimit(.minutes(3))) struct LocationManagerDelegateTests {
    /// Adopted as an app adopts `CLLocationManagerDelegate`: a `@MainActor` class, no annotation.
    @MainActor final class RecordingDelegate: LocationManagerDelegate {
        let locations = Locked<[Location]>([])
        let errors = Locked<[String]>([])
        let statuses = Locked<[LocationStatus]>([])
        /// Callbacks that ran anywhere but on the main queue.
        let offMainThread = Locked(0)

        func locationManager(_ manager: LocationManager, didUpdateLocations locations: [Location]) {
            noteThread()
            self.locations.withLock { $0 += locations }
        }
        func locationManager(_ manager: LocationManager, didFailWithError error: any Error) {
            noteThread()
            errors.withLock { $0.append("\(error)") }
        }
        func locationManager(_ manager: LocationManager, didChangeStatus status: LocationStatus) {
            noteThread()
            statuses.withLock { $0.append(status) }
        }
        private func noteThread() {
            MainActor.assertIsolated("the delegate is called off the main actor")
            // The main queue, by its own mark: on Linux the main actor runs there, and the main
            // thread itself is gone once `dispatchMain()` has taken over (it calls pthread_exit).
            if DispatchQueue.getSpecific(key: mainQueueMark) != true { offMainThread.withLock { $0 += 1 } }
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
        #expect(delegate.offMainThread.withLock { $0 } == 0)
        manager.stopUpdatingLocation()
        try await waitUntil { source.activeSessions == 0 }
    }

    /// CoreLocation's usual pattern: ask, and start updating in the callback once allowed.
    @MainActor final class AskThenStart: LocationManagerDelegate {
        let heard = Locked<[LocationAuthorization]>([])
        let locations = Locked<[Location]>([])

        func locationManagerDidChangeAuthorization(_ manager: LocationManager) {
            let status = manager.authorization?.status ?? .notDetermined
            heard.withLock { $0.append(status) }
            if status == .whenInUse || status == .always { manager.startUpdatingLocation() }
        }
        func locationManager(_ manager: LocationManager, didUpdateLocations locations: [Location]) {
            self.locations.withLock { $0 += locations }
        }
        func locationManager(_ manager: LocationManager, didFailWithError error: any Error) {}
    }

    @Test func theDelegateHearsTheAuthorizationWhenSetAndEveryChangeWithoutUpdatesRunning() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("delegate-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let authorization = LocationAuthorizationManager(
            application: "tracker",
            file: AuthorizationFile(url: folder.appendingPathComponent("tracker.json")),
            policyURL: folder.appendingPathComponent("policy.json"),
            prompt: FixedAuthorizationPrompt(.whenInUse)
        )
        let source = ScriptedLocationSource()
        let manager = LocationManager(source: source, authorization: authorization)
        let delegate = AskThenStart()
        manager.delegate = delegate
        try await waitUntil { delegate.heard.withLock { $0 } == [.notDetermined] }  // once, as CoreLocation on creation
        #expect(source.sessionsStarted == 0, "not allowed yet: nothing started")

        #expect(try await authorization.requestWhenInUseAuthorization() == .whenInUse)
        try await waitUntil { delegate.heard.withLock { $0 } == [.notDetermined, .whenInUse] }
        await source.waitForSessions(1)  // started in the callback
        source.sendFix(latitude: 52, longitude: 5, accuracy: 5, at: Date(timeIntervalSince1970: 1))
        try await waitUntil { delegate.locations.withLock { $0.count } == 1 }

        try authorization.setStatus(.denied)
        // Each call reads the status as it is when it runs (as CoreLocation's delegate does): a
        // call queued behind a slow main actor may read the same status as the next, so the
        // statuses heard are compared without repeats.
        try await waitUntil { delegate.heard.withLock { $0.last } == .denied }
        let heard = delegate.heard.withLock { $0 }
        #expect(zip(heard, heard.dropFirst()).filter { $0 != $1 }.map(\.1) == [.whenInUse, .denied], "heard \(heard)")
        #expect(heard.first == .notDetermined)
        manager.stopUpdatingLocation()
    }

    /// As CoreLocation's: a denial is told to the delegate and the updates stay started,
    /// resuming by themselves when another process allows always again (a denial ended them for
    /// good, issue 86); stopped, they do not resume.
    @Test func updatesStartedResumeWhenAccessReturns() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("resume-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = AuthorizationFile(url: folder.appendingPathComponent("tracker.json"))
        let policy = folder.appendingPathComponent("policy.json")
        let authorization = LocationAuthorizationManager(application: "tracker", file: file, policyURL: policy)
        try authorization.setStatus(.always)
        let source = ScriptedLocationSource()
        let manager = LocationManager(source: source, authorization: authorization)
        let delegate = RecordingDelegate()
        manager.delegate = delegate
        manager.startUpdatingLocation()
        await source.waitForSessions(1)
        try LocationAuthorizationManager(application: "tracker", file: file, policyURL: policy).setStatus(.denied)  // another process
        try await waitUntil { delegate.errors.withLock { $0.count } == 1 }
        #expect(delegate.errors.withLock { $0[0] }.contains("location is denied for tracker"))
        try LocationAuthorizationManager(application: "tracker", file: file, policyURL: policy).setStatus(.always)
        await source.waitForSessions(2)  // started again by itself
        source.sendFix(latitude: 52, longitude: 5, accuracy: 5, at: Date(timeIntervalSince1970: 1))
        try await waitUntil { delegate.locations.withLock { $0.count } == 1 }
        manager.stopUpdatingLocation()
        try await waitUntil { source.activeSessions == 0 }
    }

    @Test func aFixedPromptGivesItsAnswerOrTheNearestOffered() async {
        #expect(await FixedAuthorizationPrompt(.always).ask(.always, application: "a") == .always)
        #expect(await FixedAuthorizationPrompt(.always).ask(.whenInUse, application: "a") == .whenInUse)
        #expect(await FixedAuthorizationPrompt(.deny).ask(.whenInUse, application: "a") == .deny)
        #expect(await FixedAuthorizationPrompt(.deny).ask(.upgradeToAlways, application: "a") == .whenInUse)
        #expect(await FixedAuthorizationPrompt(.once).ask(.always, application: "a") == .once)
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
        #expect(delegate.offMainThread.withLock { $0 } == 0)
    }

    /// A manager its app drops while updating goes, as a `CLLocationManager` does: its watch
    /// stops and the facade's stream ends (while a consumer's own stream holds its manager).
    @Test func aManagerDroppedWhileUpdatingGoesAndStopsItsWatch() async throws {
        let source = ScriptedLocationSource()
        weak var released: LocationManager?
        do {
            let manager = LocationManager(source: source)
            released = manager
            manager.startUpdatingLocation()
            await source.waitForSessions(1)
        }
        try await waitUntil { released == nil && source.activeSessions == 0 }
        #expect(released == nil && source.activeSessions == 0)
    }

}
