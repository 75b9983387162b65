import KeepAliveCore
import Testing

@testable import KeepAliveGeoClue

/// A coarse position is one cell that moves only for a real move: what a client at a level
/// below exact is told, and what it cannot average back into the device's position.
struct CoarsePositionTests {
    /// A parked device's fixes, wandering 30 m either side of a cell border (52.9° N at city
    /// level): one cell, whatever side each fix falls on.
    @Test func aParkedDeviceAtACellBorderKeepsOneCell() {
        var position = CoarsePosition(grid: GeoClueAccuracy.city.grid!)
        var generator = SystemRandomNumberGenerator()
        var changes = 0
        for _ in 0..<1_000 {
            let jitter = Double.random(in: -0.0003...0.0003, using: &generator)  // about 30 m
            if position.update(with: Location(latitude: 52.9 + jitter, longitude: 5.35)) { changes += 1 }
        }
        #expect(changes == 1, "the first fix places it; none after moves it")
        let told = position.location(like: Location(latitude: 52.9, longitude: 5.35), accuracy: 15_000)
        let latitude = told?.latitude ?? 0
        #expect([52.85, 52.95].contains { abs($0 - latitude) < 1e-9 }, "a cell's centre: \(latitude)")
        #expect(told?.horizontalAccuracy == 15_000)
    }

    /// A quarter of a cell past the border, and the cell follows; then it stays again.
    @Test func aRealMoveChangesTheCell() {
        var position = CoarsePosition(grid: 0.1)
        let changed = [52.85, 52.92, 52.93, 52.88].map { position.update(with: Location(latitude: $0, longitude: 5.35)) }
        // The first places it; 52.92 is within the margin beyond the border, 52.93 more than a
        // quarter cell beyond it; back at 52.88, within the margin, the new cell stays.
        #expect(changed == [true, false, true, false])
        let told = position.location(like: Location(latitude: 52.88, longitude: 5.35), accuracy: 15_000)
        #expect(told.map { abs($0.latitude - 52.95) < 1e-9 } == true, "\(told as Any)")
    }

    /// A coarse location carries nothing finer than its cell: no altitude, speed or heading.
    @Test func aCoarseLocationCarriesNothingFiner() {
        var position = CoarsePosition(grid: 0.01)
        var fix = Location(latitude: 52.8501, longitude: 5.3136, altitudeMSL: 3, horizontalAccuracy: 5, speed: 2.9, course: 230)
        fix.timestamp = nil
        _ = position.update(with: fix)
        let told = position.location(like: fix, accuracy: 1_000)
        #expect(told?.altitudeMSL == nil && told?.speed == nil && told?.course == nil)
        #expect(told.map { abs($0.latitude - 52.855) < 1e-9 && abs($0.longitude - 5.315) < 1e-9 } == true)
    }

    /// GeoClue's reading of a requested number: between two levels, the coarser.
    @Test func aRequestedNumberIsReadAsGeoClueReadsIt() {
        #expect(GeoClueAccuracy(requested: 7) == .street)
        #expect(GeoClueAccuracy(requested: 3) == .country)
        #expect(GeoClueAccuracy(requested: 99) == .exact)
        #expect(GeoClueAccuracy(requested: 0) == .none)
    }
}
