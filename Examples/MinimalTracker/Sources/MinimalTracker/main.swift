import FoundationEssentials
import KeepAliveCore

// minimal-tracker [LOG]: fixes better than 50 m from gpsd on localhost, or from an NMEA log
// (replayed as fast as it decodes), one line each.
let arguments = CommandLine.arguments.dropFirst()
let manager: LocationManager
if let log = arguments.first {
    manager = LocationManager(source: NMEAReplaySource(file: URL(fileURLWithPath: log), speed: 0))
} else {
    manager = LocationManager(source: GPSDSource(host: "localhost", port: 2947))
}
var fixes = 0
do {
    for try await update in manager.updates(LocationFilter(desiredAccuracy: 50)) {
        switch update {
        case .location(let fix):
            fixes += 1
            print(fix.latitude, fix.longitude, fix.horizontalAccuracy.map { "±\($0) m" } ?? "")
        case .status(let status):
            print("#", status)
        }
    }
} catch {
    print("minimal-tracker: \(error)")
}
print("\(fixes) fixes")
