import FoundationEssentials
import KeepAliveCore
import Tracker

// minimal-tracker [LOG]: fixes better than 50 m from gpsd on localhost, or from an NMEA log
// (replayed as fast as it decodes), one line each, delivered to a @MainActor delegate. With a
// log, then a one-shot with a maximum age of 10 s against the log played at its own speed: its
// fixes are years old by the wall clock, and fresh by the replay's.
let log = CommandLine.arguments.dropFirst().first.map { URL(fileURLWithPath: $0) }
let tracker = Tracker(
    source: log.map { NMEAReplaySource(file: $0, speed: 0) } ?? GPSDSource(host: "localhost", port: 2947),
    desiredAccuracy: 50
)
tracker.onFix = { fix in print(fix.latitude, fix.longitude, fix.horizontalAccuracy.map { "±\($0) m" } ?? "") }
let fixes = await tracker.run()
for error in tracker.errors { print("minimal-tracker: \(error)") }
if let log {
    do {
        let replay = LocationManager(source: NMEAReplaySource(file: log, speed: 1))
        let fix = try await replay.requestLocation(desiredAccuracy: 50, maximumAge: .seconds(10), timeout: .seconds(15))
        print("one-shot:", fix.latitude, fix.longitude, fix.timestamp.map { "at \($0)" } ?? "")
    } catch {
        print("minimal-tracker: one-shot: \(error)")
    }
}
print("\(fixes.count) fixes")
