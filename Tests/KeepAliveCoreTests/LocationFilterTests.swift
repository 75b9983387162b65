import Foundation
import KeepAliveCore
import LocationKeepAliveMocks
import Testing

/// The continuous stream's filters, through a manager over a scripted source.
@Suite(.timeLimit(.minutes(3))) struct LocationFilterTests {
    let source = ScriptedLocationSource()
    let start = Date(timeIntervalSince1970: 1_700_000_000)

    private func collect(
        _ filter: LocationFilter,
        wallClock: Date? = nil,
        script: (ScriptedLocationSource, Date) -> Void
    ) async throws -> [LocationUpdate] {
        let now = wallClock ?? start
        let manager = LocationManager(source: source, wallClock: { now })
        let updates = manager.updates(filter)
        await source.waitForSessions(1)
        script(source, start)
        source.finish()
        var collected: [LocationUpdate] = []
        for try await update in updates { collected.append(update) }
        return collected
    }

    private func fixes(_ updates: [LocationUpdate]) -> [Double] {
        updates.compactMap { if case .location(let fix) = $0 { fix.latitude } else { nil } }
    }

    @Test func dropsDuplicatesBySameFixTime() async throws {
        let updates = try await collect(LocationFilter()) { source, t in
            source.sendFix(latitude: 1, longitude: 0, at: t)
            source.sendFix(latitude: 1.5, longitude: 0, at: t)  // gpsd's second report of the epoch
            source.sendFix(latitude: 2, longitude: 0, at: t + 1)
        }
        #expect(fixes(updates) == [1, 2])
    }

    /// A receiver time that goes back is said first, then, by default, its fixes delivered as
    /// they come; with `.skip`, none until the time passes the newest delivered, said once.
    @Test func aReceiverTimeGoingBackIsSaidAndHandledAsThePolicySays() async throws {
        func script(_ source: ScriptedLocationSource, _ t: Date) {
            source.sendFix(latitude: 1, longitude: 0, at: t + 60)
            source.sendFix(latitude: 2, longitude: 0, at: t)
            source.sendFix(latitude: 3, longitude: 0, at: t + 1)
            source.sendFix(latitude: 4, longitude: 0, at: t + 61)
        }
        let back = LocationUpdate.status(.receiverTimeWentBack(from: start + 60, to: start))
        let delivered = try await collect(LocationFilter(), script: script)
        #expect(fixes(delivered) == [1, 2, 3, 4])
        #expect(delivered.firstIndex(of: back) == 1, "said before the fix that went back: \(delivered)")
        let skipped = try await LocationFilterTests().collect(LocationFilter(whenTimeGoesBack: .skip), script: script)
        #expect(fixes(skipped) == [1, 4])
        #expect(skipped.filter { $0 == back }.count == 1, "\(skipped)")
    }

    /// The package's errors say their words through Foundation's `localizedDescription`.
    @Test func aLocationErrorsLocalizedDescriptionIsItsMessage() {
        let error: any Error = LocationError(.invalidOptions, "desired accuracy must be a positive number")
        #expect(error.localizedDescription == "\(error)")
        #expect(!error.localizedDescription.contains("could not be completed"))
    }

    @Test func dropsUntimedRepeatsOfTheSamePlace() async throws {
        let updates = try await collect(LocationFilter()) { source, t in
            source.sendFix(latitude: 1, longitude: 0)  // gpsd before it knows the date
            source.sendFix(latitude: 1, longitude: 0)
            source.sendFix(latitude: 1.1, longitude: 0)
            source.sendFix(latitude: 1.1, longitude: 0, at: t)
        }
        #expect(fixes(updates) == [1, 1.1, 1.1])
    }

    @Test func everythingKeepsDuplicates() async throws {
        let updates = try await collect(.everything) { source, t in
            source.sendFix(latitude: 1, longitude: 0, at: t)
            source.sendFix(latitude: 1, longitude: 0, at: t)
        }
        #expect(fixes(updates) == [1, 1])
    }

    @Test func dropsInaccurateAndUnknownAccuracy() async throws {
        let updates = try await collect(LocationFilter(desiredAccuracy: 10)) { source, t in
            source.sendFix(latitude: 1, longitude: 0, accuracy: 25, at: t)
            source.sendFix(latitude: 2, longitude: 0, accuracy: nil, at: t + 1)
            source.sendFix(latitude: 3, longitude: 0, accuracy: 10, at: t + 2)
        }
        #expect(fixes(updates) == [3])
    }

    @Test func distanceFilterMeasuresFromTheLastDelivered() async throws {
        // 0.0001 degree of latitude is about 11.1 m.
        let updates = try await collect(LocationFilter(distanceFilter: 20)) { source, t in
            source.sendFix(latitude: 0, longitude: 0, at: t)
            source.sendFix(latitude: 0.0001, longitude: 0, at: t + 1)
            source.sendFix(latitude: 0.0002, longitude: 0, at: t + 2)
            source.sendFix(latitude: 0.0003, longitude: 0, at: t + 3)
        }
        #expect(fixes(updates) == [0, 0.0002])
    }

    @Test func staleFixesAreDroppedAgainstTheWallClock() async throws {
        let updates = try await collect(LocationFilter(maximumAge: .seconds(5)), wallClock: start + 10) { source, t in
            source.sendFix(latitude: 1, longitude: 0, at: t)  // 10 s old
            source.sendFix(latitude: 2, longitude: 0, at: nil)  // age unknown
            source.sendFix(latitude: 3, longitude: 0, at: t + 6)  // 4 s old
        }
        #expect(fixes(updates) == [3])
    }

    @Test func fixLossIsAStatusAndTheOldFixIsNeverRedelivered() async throws {
        let updates = try await collect(LocationFilter(distanceFilter: 1000)) { source, t in
            source.sendNoFix(at: t)
            source.sendFix(latitude: 1, longitude: 0, at: t + 1)
            source.sendNoFix(at: t + 2)
            source.sendNoFix(at: t + 3)
            source.sendFix(latitude: 1, longitude: 0, at: t + 1)  // the old fix again, replayed
            source.sendFix(latitude: 1, longitude: 0, at: t + 4)  // regained, same place: news despite the filter
        }
        #expect(
            updates == [
                .status(.noFix),
                .location(Location(latitude: 1, longitude: 0, timestamp: start + 1, device: "scripted")),
                .status(.fixLost),
                .location(Location(latitude: 1, longitude: 0, timestamp: start + 4, device: "scripted")),
            ]
        )
    }

    @Test(arguments: [
        LocationFilter(desiredAccuracy: -3), LocationFilter(desiredAccuracy: 0), LocationFilter(desiredAccuracy: .nan),
        LocationFilter(distanceFilter: -2), LocationFilter(distanceFilter: .infinity),
        LocationFilter(maximumAge: .seconds(-1)),
    ])
    func invalidOptionsFailTheStream(filter: LocationFilter) async throws {
        let manager = LocationManager(source: source)
        let error = try #require(await #expect(throws: LocationError.self) { for try await _ in manager.updates(filter) {} })
        #expect(error.code == .invalidOptions)
        #expect(source.sessionsStarted == 0)
    }

    /// `kCLLocationAccuracyBest` (-1), `kCLLocationAccuracyBestForNavigation` (-2) and
    /// `kCLDistanceFilterNone` (-1) mean what they mean in CoreLocation: every fix.
    @Test(arguments: [LocationFilter.bestAccuracy, LocationFilter.bestAccuracyForNavigation])
    func coreLocationsConstantsTakeEveryFix(accuracy: Double) async throws {
        let updates = try await collect(LocationFilter(desiredAccuracy: accuracy, distanceFilter: LocationFilter.noDistanceFilter)) { source, t in
            source.sendFix(latitude: 1, longitude: 0, accuracy: 500, at: t)
            source.sendFix(latitude: 1, longitude: 0, at: t + 1)  // accuracy unknown, the same place
            source.sendFix(latitude: 1.00001, longitude: 0, accuracy: 3, at: t + 2)
        }
        #expect(fixes(updates) == [1, 1, 1.00001])
    }
}
