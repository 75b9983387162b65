import ArgumentParser
import FoundationEssentials
import Glibc
import KeepAliveCore
import ReceiverSimulation

/// `gnss-receiver`: a simulated u-blox M8 on a pseudo-terminal that gpsd opens as its device.
/// It speaks NMEA once a second while powered, answers gpsd's UBX probes, obeys UBX-RXM-PMREQ
/// (backup, woken by any input) and UBX-CFG-RST, and writes its power log as JSON lines.
@main
struct ReceiverCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gnss-receiver",
        abstract: "A simulated GNSS receiver (a u-blox M8) on a pseudo-terminal, for gpsd.",
        discussion: "Prints the terminal's path, then runs until killed. Give gpsd the path (or --link)."
    )

    @Option(help: "A symbolic link made to the terminal (removed at the end).")
    var link: String?
    @Option(help: "Appends the power log here, a JSON object a line (on, fix, backup, off).")
    var powerLog: String?
    @Option(help: "Still at LATITUDE,LONGITUDE.")
    var at: String = "52.5200,13.4050"
    @Option(help: "Along the fixes of this NMEA log, one a second, looping (instead of --at).")
    var log: String?
    @Option(help: "Along these points, LAT,LON;LAT,LON;..., --seconds-per-point apart, looping (instead of --at).")
    var path: String?
    @Option(help: "With --path: seconds from one point to the next.")
    var secondsPerPoint: Double = 10
    @Option(help: "Days an almanac stays good enough for a warm start.")
    var almanacValidity: Double = 14
    @Option(help: "The start at launch: hot, warm or cold.")
    var first: String = "cold"
    @Option(help: "Seconds to a first fix after a hot start.")
    var hot: Double = 1
    @Option(help: "Seconds to a first fix after a warm start.")
    var warm: Double = 25
    @Option(help: "Seconds to a first fix after a cold start.")
    var cold: Double = 26
    @Option(help: "Seconds an ephemeris stays current.")
    var ephemerisValidity: Double = 14_400
    @Option(help: "Seconds of tracking that collect the ephemeris anew.")
    var collection: Double = 30
    @Option(help: "A FIFO whose lines `on` and `off` switch the supply (a modem's AT+QGPS=1 and AT+QGPSEND).")
    var commands: String?

    func run() throws {
        var model = ReceiverStartModel()
        (model.hotTimeToFix, model.warmTimeToFix, model.coldTimeToFix) = (.seconds(hot), .seconds(warm), .seconds(cold))
        (model.ephemerisValidity, model.ephemerisCollection) = (.seconds(ephemerisValidity), .seconds(collection))
        model.almanacValidity = .seconds(almanacValidity * 86_400)
        guard let start = ReceiverStartKind(rawValue: first) else { throw ValidationError("--first is hot, warm or cold, not \(first)") }
        let track = try makeTrack()
        let terminal = try PseudoTerminal()
        if let link {
            unlink(link)
            guard symlink(terminal.path, link) == 0 else { throw ValidationError("cannot link \(link): \(PseudoTerminal.reason())") }
        }
        print(terminal.path)
        fflush(nil)
        var runner = ReceiverRunner(
            receiver: SimulatedReceiver(track: track, first: start, at: ReceiverRunner.bootTime(), model: model),
            terminal: terminal, powerLog: powerLog, commands: commands
        )
        runner.run()
    }

    private func makeTrack() throws -> SimulatedTrack {
        if let log {
            guard let bytes = FileManager.default.contents(atPath: log) else { throw ValidationError("cannot read the log \(log)") }
            return SimulatedTrack.log([UInt8](bytes))
        }
        if let path {
            let points = try path.split(separator: ";").map { try Self.point(String($0), option: "--path") }
            guard secondsPerPoint > 0 else { throw ValidationError("--seconds-per-point must be positive") }
            return SimulatedTrack(points: points, secondsPerPoint: secondsPerPoint)
        }
        let point = try Self.point(at, option: "--at")
        return .still(latitude: point.latitude, longitude: point.longitude)
    }

    private static func point(_ text: String, option: String) throws -> (latitude: Double, longitude: Double) {
        let parts = text.split(separator: ",").compactMap { Double($0.filter { $0 != " " }) }
        guard parts.count == 2, abs(parts[0]) <= 90, abs(parts[1]) <= 180 else {
            throw ValidationError("\(option) takes LATITUDE,LONGITUDE in degrees, not \(text)")
        }
        return (parts[0], parts[1])
    }
}
