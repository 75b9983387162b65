import Clocks
import Foundation
import KeepAliveCore
import LocationKeepAliveMocks
import Testing

/// The location manager enforcing authorization, with the app's state.
@Suite(.timeLimit(.minutes(3))) struct AuthorizationEnforcementTests {
    let source = ScriptedLocationSource()
    let file: AuthorizationFile
    let policy: URL
    let clock = TestClock<Duration>()
    let t0 = Date(timeIntervalSince1970: 1_700_000_000)

    init() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("enforce-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        file = AuthorizationFile(url: folder.appendingPathComponent("app.json"))
        policy = folder.appendingPathComponent("policy.json")
    }

    private func authorization(
        _ status: LocationAuthorization,
        accuracy: LocationAccuracyAuthorization = .full
    ) throws
        -> LocationAuthorizationManager
    {
        let manager = LocationAuthorizationManager(application: "tracker", file: file, policyURL: policy, clock: clock)
        if status != .notDetermined { try manager.setStatus(status, accuracy: accuracy) }
        return manager
    }

    /// Everything the stream delivered, once the source finishes.
    private func drain(
        _ updates: AsyncThrowingStream<LocationUpdate, any Error>
    ) async -> ([LocationUpdate], (any Error)?) {
        var seen: [LocationUpdate] = []
        do {
            for try await update in updates { seen.append(update) }
            return (seen, nil)
        } catch {
            return (seen, error)
        }
    }

    private func fixes(_ updates: [LocationUpdate]) -> [Double] {
        updates.compactMap { if case .location(let fix) = $0 { fix.latitude } else { nil } }
    }

    @Test(arguments: [LocationAuthorization.notDetermined, .denied])
    func withoutAuthorizationEverythingFailsNamingTheStatus(status: LocationAuthorization) async throws {
        let manager = LocationManager(source: source, authorization: try authorization(status))
        let (_, error) = await drain(manager.updates())
        let locationError = try #require(error as? LocationError)
        #expect(locationError.code == .notAuthorized)
        #expect(locationError.message.contains("location is \(status) for tracker"))
        await #expect(throws: LocationError.self) { try await manager.requestLocation(timeout: .seconds(1)) }
        #expect(source.sessionsStarted == 0, "gpsd is never even asked")
    }

    /// A program that needs always, on a file that says denied: the request returns denied (no
    /// prompt, as CoreLocation), and the refusal says how to allow always, not when in use.
    @Test func aDenialAfterAnAlwaysRequestSaysHowToAllowAlways() async throws {
        let authorization = try authorization(.denied)
        #expect(try await authorization.requestAlwaysAuthorization() == .denied)
        #expect(authorization.snapshot.requestedAlways)
        let manager = LocationManager(source: source, authorization: authorization)
        let (_, error) = await drain(manager.updates())
        let message = try #require(error as? LocationError).message
        #expect(message.contains("setStatus(.always)") && message.contains("keepalive auth set always --app tracker"), "\(message)")
        #expect(!message.contains("whenInUse"), "\(message)")
        // Without an always request, the refusal names when in use, the least that gives fixes.
        let other = LocationManager(source: source, authorization: try self.authorization(.denied))
        let (_, plain) = await drain(other.updates())
        #expect(try #require(plain as? LocationError).message.contains("keepalive auth set when-in-use --app tracker"))
    }

    @Test func servicesOffSystemWideFailsEvenWithAlways() async throws {
        try #"{"version":1,"locationServicesEnabled":false,"restrictedApplications":[]}"#.write(
            to: policy,
            atomically: true,
            encoding: .utf8
        )
        let manager = LocationManager(source: source, authorization: try authorization(.always))
        let (_, error) = await drain(manager.updates())
        #expect((error as? LocationError)?.message.contains("location services are off") == true)
    }

    @Test func whenInUseGetsFixesInTheForegroundAndNoneInTheBackground() async throws {
        let manager = LocationManager(source: source, authorization: try authorization(.whenInUse))
        let updates = manager.updates()
        await source.waitForSessions(1)
        source.sendFix(latitude: 1, longitude: 0, at: t0)
        try await waitUntil { manager.location?.latitude == 1 }
        manager.applicationState = .background
        source.sendFix(latitude: 2, longitude: 0, at: t0 + 1)
        try await waitUntil { manager.location?.latitude == 2 }
        await #expect(throws: LocationError.self) { try await manager.requestLocation(timeout: .seconds(1)) }
        manager.applicationState = .active
        source.sendFix(latitude: 3, longitude: 0, at: t0 + 2)
        source.finish()
        let (seen, error) = await drain(updates)
        #expect(error == nil)
        #expect(fixes(seen) == [1, 3])
        #expect(
            seen.contains(.status(.paused("when-in-use authorization: no fixes while tracker is in the background")))
        )
        #expect(seen.contains(.status(.resumed)))
    }

    @Test func alwaysGetsFixesInEveryState() async throws {
        let manager = LocationManager(source: source, authorization: try authorization(.always))
        let updates = manager.updates()
        await source.waitForSessions(1)
        for (index, state) in [AppState.active, .background, .suspended, .inactive].enumerated() {
            manager.applicationState = state
            source.sendFix(latitude: Double(index), longitude: 0, at: t0 + Double(index))
            try await waitUntil { manager.location?.latitude == Double(index) }
        }
        source.finish()
        let (seen, _) = await drain(updates)
        #expect(fixes(seen) == [0, 1, 2, 3])
    }

    @Test func aLiveDowngradeStopsBackgroundFixesAtOnceAndAnUpgradeResumesThem() async throws {
        let authorization = try authorization(.always)
        let manager = LocationManager(source: source, authorization: authorization)
        // Read as it comes: the watcher's thread announces a change just after the access
        // changed, and the next fix comes from the source's thread.
        let received = Locked<[LocationUpdate]>([])
        let reader = Task { [updates = manager.updates()] in
            for try await update in updates { received.withLock { $0.append(update) } }
        }
        func announced(_ status: LocationStatus) -> Bool {
            received.withLock { $0.contains { if case .status(status) = $0 { true } else { false } } }
        }
        await source.waitForSessions(1)
        manager.applicationState = .background
        source.sendFix(latitude: 1, longitude: 0, at: t0)
        try await waitUntil { manager.location?.latitude == 1 }

        let settings = LocationAuthorizationManager(application: "tracker", file: file, policyURL: policy)
        try settings.setStatus(.whenInUse)  // another process: keepalive auth set when-in-use
        await waitUntil({ manager.access != .deliver(reduced: false) }, advancing: clock, by: .milliseconds(250))
        source.sendFix(latitude: 2, longitude: 0, at: t0 + 1)
        try await waitUntil { manager.location?.latitude == 2 }

        try settings.setStatus(.always)
        await waitUntil({ manager.access == .deliver(reduced: false) }, advancing: clock, by: .milliseconds(250))
        try await waitUntil { announced(.resumed) }
        source.sendFix(latitude: 3, longitude: 0, at: t0 + 2)
        source.finish()
        _ = await reader.result
        let seen = received.withLock { $0 }
        #expect(fixes(seen) == [1, 3])
        let statuses = seen.compactMap { if case .status(let status) = $0 { status } else { nil } }
        #expect(
            statuses.contains(.authorizationChanged(.whenInUse)) && statuses.contains(.authorizationChanged(.always))
        )
        #expect(statuses.contains(.resumed))
    }

    @Test func aDenialWhileRunningEndsTheStreamWithTheReason() async throws {
        let authorization = try authorization(.always)
        let manager = LocationManager(source: source, authorization: authorization)
        let updates = manager.updates()
        await source.waitForSessions(1)
        try authorization.setStatus(.denied)
        let (_, error) = await drain(updates)
        #expect((error as? LocationError)?.code == .notAuthorized)
        try await waitUntil { source.activeSessions == 0 }
    }

    @Test func reducedAccuracyRoundsEveryFix() async throws {
        let manager = LocationManager(source: source, authorization: try authorization(.always, accuracy: .reduced))
        let updates = manager.updates()
        await source.waitForSessions(1)
        source.sendFix(latitude: 52.367_61, longitude: 4.904_14, accuracy: 4, at: t0)
        source.finish()
        let (seen, _) = await drain(updates)
        let fix = try #require(seen.compactMap { if case .location(let fix) = $0 { fix } else { nil } }.first)
        #expect(abs(fix.latitude - 52.37) < 1e-9 && fix.horizontalAccuracy == 1000)
    }

    @Test func aBackgroundActivitySessionKeepsWhenInUseFixesComing() async throws {
        let manager = LocationManager(source: source, authorization: try authorization(.whenInUse))
        let updates = manager.updates()
        await source.waitForSessions(1)
        manager.beginBackgroundActivitySession()
        manager.applicationState = .background
        source.sendFix(latitude: 1, longitude: 0, at: t0)
        try await waitUntil { manager.location?.latitude == 1 }
        manager.endBackgroundActivitySession()
        source.sendFix(latitude: 2, longitude: 0, at: t0 + 1)
        source.finish()
        let (seen, _) = await drain(updates)
        #expect(fixes(seen) == [1])
    }
}

@Suite(.timeLimit(.minutes(3))) struct AuthorizationDelegateTests {
    @MainActor final class Delegate: LocationManagerDelegate {
        let changes = Locked(0)
        func locationManager(_ manager: LocationManager, didUpdateLocations locations: [Location]) {}
        func locationManager(_ manager: LocationManager, didFailWithError error: any Error) {}
        func locationManagerDidChangeAuthorization(_ manager: LocationManager) { changes.withLock { $0 += 1 } }
    }

    @Test func theFacadeDelegateHearsOfAuthorizationChanges() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("delegate-\(UUID().uuidString)")
        let file = AuthorizationFile(url: folder.appendingPathComponent("app.json"))
        let clock = TestClock<Duration>()
        let authorization = LocationAuthorizationManager(
            application: "app",
            file: file,
            policyURL: folder.appendingPathComponent("none"),
            clock: clock
        )
        try authorization.setStatus(.always)
        let source = ScriptedLocationSource()
        let manager = LocationManager(source: source, authorization: authorization)
        let delegate = Delegate()
        manager.delegate = delegate
        manager.startUpdatingLocation()
        await source.waitForSessions(1)
        try authorization.setStatus(.whenInUse)
        try await waitUntil { delegate.changes.withLock { $0 } == 1 }
        manager.stopUpdatingLocation()
    }
}
