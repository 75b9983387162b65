import Foundation
import LocationKeepAlive

/// `keepalive-bench monitor [FIXES]`: the time `LocationMonitor.evaluate` takes per fix with
/// 10, 1,000 and 100,000 circular regions (100 m, on a 250 m grid: 79 km by 79 km for 100,000)
/// while a drive at 15 m/s crosses the grid, entering and leaving regions (stationary detection
/// and the odometer run on every fix too). One line per count:
/// `monitor-<count> <median µs> <p99 µs> <max µs> events=<n>`.
enum MonitorBench {
    static func run(fixes count: Int) throws {
        let origin = (latitude: 52.0, longitude: 5.0)
        let metresPerDegree = 6_371_008.8 * Double.pi / 180
        let eastScale = metresPerDegree * cos(origin.latitude * .pi / 180)
        func coordinate(north: Double, east: Double) -> Coordinate {
            Coordinate(latitude: origin.latitude + north / metresPerDegree, longitude: origin.longitude + east / eastScale)
        }
        for regions in [10, 1_000, 100_000] {
            let side = Int(Double(regions).squareRoot().rounded(.up))
            var conditions: [String: MonitorCondition] = [:]
            for index in 0..<regions {
                let point = coordinate(north: Double(index / side) * 250, east: Double(index % side) * 250)
                conditions["region-\(index)"] = .circle(center: point, radius: 100)
            }
            let monitor = try LocationMonitor(named: "bench", file: nil)
            try monitor.add(conditions, assuming: .unsatisfied)
            let clock = ContinuousClock()
            var times: [Double] = []
            var events = 0
            let start = Date(timeIntervalSince1970: 1_750_000_000)
            for second in 0..<count {
                // Diagonally across the grid, with a little wobble, at 15 m/s.
                let along = Double(second) * 15
                let point = coordinate(north: along * 0.6 + 3 * sin(Double(second)), east: along * 0.8)
                let fix = Location(
                    latitude: point.latitude, longitude: point.longitude, horizontalAccuracy: 8, speed: 15,
                    timestamp: start.addingTimeInterval(Double(second))
                )
                let started = clock.now
                events += monitor.evaluate(fix).count
                times.append((clock.now - started).seconds * 1_000_000)
            }
            times.sort()
            let p99 = times[min(times.count - 1, times.count * 99 / 100)]
            print(String(format: "monitor-%d %.2f %.2f %.2f events=%d", regions, times[times.count / 2], p99, times.last!, events))
        }
    }
}
