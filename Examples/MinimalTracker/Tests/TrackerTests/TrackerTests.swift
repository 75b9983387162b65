import Dispatch
import FoundationEssentials
import KeepAliveCore
import Testing
import Tracker

/// The bundled log of the package this example depends on.
private let log = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("../../Mocks/Fixtures/nmea/mt3339.log").standardized

/// Marks the main queue, where the main actor runs on Linux, so a callback can tell it runs there.
private let mainQueue: DispatchSpecificKey<Bool> = {
    let key = DispatchSpecificKey<Bool>()
    DispatchQueue.main.setSpecific(key: key, value: true)
    return key
}()

@MainActor @Test func aMainActorDelegateGetsEveryFixOnTheMainActor() async {
    let tracker = Tracker(source: NMEAReplaySource(file: log, speed: 0))
    var callbacks = 0
    var offTheMainQueue = 0
    tracker.onCallback = {
        callbacks += 1
        if DispatchQueue.getSpecific(key: mainQueue) != true { offTheMainQueue += 1 }
    }
    let fixes = await tracker.run()
    #expect(fixes.count == 30)
    #expect(tracker.errors.isEmpty)
    #expect(callbacks == 31, "30 fixes and the end of the replay")
    #expect(offTheMainQueue == 0)
}

@Test func aOneShotWithAMaximumAgeIsAnsweredByAReplayOfAnOldLog() async throws {
    let manager = LocationManager(source: NMEAReplaySource(file: log, speed: 0))
    let fix = try await manager.requestLocation(desiredAccuracy: 50, maximumAge: .seconds(10), timeout: .seconds(60))
    let time = try #require(fix.timestamp)
    #expect(Date().timeIntervalSince(time) > 365 * 86_400, "the log's fix, years old by the wall clock")
}
