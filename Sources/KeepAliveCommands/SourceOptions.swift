import ArgumentParser
import FoundationEssentials
import Glibc
import KeepAliveCore
import KeepAliveReceiver

/// Where fixes come from, and how they are filtered: shared by every command.
struct SourceOptions: ParsableArguments {
    @Option(name: .customLong("gpsd"), help: ArgumentHelp("gpsd to connect to.", valueName: "host:port"))
    var gpsd: String = "localhost:2947"

    @Flag(
        name: .customLong("wait-for-gpsd"),
        help: "Wait for a gpsd not there yet (started before it at boot), retrying with the reconnection's backoff (0.25 s to 8 s), instead of failing at once."
    )
    var waitForGPSD = false

    @Option(
        help: ArgumentHelp(
            "Decode an NMEA log natively instead of asking gpsd: a file, a FIFO, a device, or - for standard input.",
            valueName: "file"
        )
    )
    var replay: String?

    @Option(help: "Replay speed: 1 as recorded, 10 ten times faster, 0 as fast as possible (gaps over 5 s in the log play as 5 s).")
    var speed: Double = 1

    @Flag(inversion: .prefixedNo, help: "With --replay: start the log again at its end, times shifted so they keep increasing.")
    var loop = false

    @Option(help: ArgumentHelp("Drop fixes less accurate than this (metres).", valueName: "m"))
    var accuracy: Double?

    @Option(help: ArgumentHelp("Drop fixes closer than this to the last one (metres).", valueName: "m"))
    var distance: Double?

    @Option(
        name: .customLong("max-age"),
        help: ArgumentHelp(
            "Drop fixes older than this (seconds, on the receiver's clock: gpsd's or a replay's alike, whatever its year).",
            valueName: "s"
        )
    )
    var maxAge: Double?

    @Flag(inversion: .prefixedNo, help: "One JSON object per line.")
    var json = false

    @Option(help: "Enforce this application's location authorization (see `keepalive auth`); none by default.")
    var app: String?

    @Option(
        name: .customLong("auth-file"),
        help: ArgumentHelp("With --app: its authorization file.", valueName: "path")
    )
    var authFile: String?

    func validate() throws {
        guard speed >= 0, speed.isFinite else {
            throw ValidationError("--speed must be 0 or more (0 replays as fast as possible)")
        }
        if let accuracy, !(accuracy > 0 && accuracy.isFinite) {
            throw ValidationError("--accuracy must be a positive number of metres")
        }
        if let distance, !(distance >= 0 && distance.isFinite) {
            throw ValidationError("--distance must be 0 or more metres")
        }
        if let maxAge, !(maxAge > 0 && maxAge.isFinite) {
            throw ValidationError("--max-age must be a positive number of seconds")
        }
        _ = try endpoint()
        if authFile != nil, app == nil { throw ValidationError("--auth-file goes with --app") }
        if loop, replay == nil { throw ValidationError("--loop goes with --replay") }
        if authFile?.isEmpty == true { throw ValidationError("--auth-file needs a path") }
        if let replay, replay != "-" {
            // Only what can be told without opening it (opening a FIFO waits for its writer):
            // the rest (permissions) is said when the log starts.
            var info = stat()
            guard !replay.isEmpty, stat(replay, &info) == 0 else {
                throw ValidationError("--replay: no such file or directory: '\(replay)'")
            }
            if info.st_mode & S_IFMT == S_IFDIR {
                throw ValidationError("--replay: \(replay) is a directory; give a log file, a FIFO, or - for standard input")
            }
        }
    }

    func endpoint() throws -> (host: String, port: Int) {
        let parts = gpsd.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count <= 2, let host = parts.first, !host.isEmpty else {
            throw ValidationError("--gpsd must be HOST or HOST:PORT, not '\(gpsd)'")
        }
        guard parts.count == 2 else { return (String(host), 2947) }
        guard let port = Int(parts[1]), (1...65535).contains(port) else {
            throw ValidationError("--gpsd port must be 1-65535, not '\(parts[1])'")
        }
        return (String(host), port)
    }

    var maximumAge: Duration? { maxAge.map { .seconds($0) } }

    var filter: LocationFilter {
        LocationFilter(desiredAccuracy: accuracy, distanceFilter: distance, maximumAge: maximumAge)
    }

    /// The manager for these options, enforcing `--app`'s authorization when given.
    func makeManager() throws -> LocationManager {
        try makeManager(
            authorization: app.map { app in
                LocationAuthorizationManager(
                    application: app,
                    file: authFile.map { AuthorizationFile(url: URL(fileURLWithPath: $0)) }
                )
            }
        )
    }

    /// The receiver's power switch `way` asks for (`nil` for a replay, for `off`, and for `auto`
    /// where nothing switches the receiver); a way named that cannot work here fails, saying why.
    func makeReceiverPower(_ way: ReceiverPowerWay) async throws -> ReceiverPowerSwitch? {
        guard replay == nil, way != .off else { return nil }
        let (host, port) = try endpoint()
        do {
            let control = try await ReceiverPower.choose(way, gpsdHost: host, gpsdPort: port)
            // Nothing to switch (`auto` found no way): the receiver stays on, and polls get new fixes.
            return control.way == .off ? nil : ReceiverPowerSwitch(control: control)
        } catch {
            throw ValidationError("--receiver-power \(way): \(error)")
        }
    }

    func makeManager(authorization: LocationAuthorizationManager?, receiverPower: ReceiverPowerSwitch? = nil) throws -> LocationManager {
        if let replay {
            // The log starts playing now, as a receiver would be running when the command starts.
            // `-` is standard input, read as a stream like any pipe.
            let file = URL(fileURLWithPath: replay == "-" ? "/dev/stdin" : replay)
            let source = NMEAReplaySource(file: file, speed: speed, loops: loop)
            try source.start()
            return LocationManager(source: source, authorization: authorization)
        }
        let (host, port) = try endpoint()
        let source = GPSDSource(host: host, port: port, waitsForGPSD: waitForGPSD)
        return LocationManager(source: source, authorization: authorization, receiverPower: receiverPower)
    }
}
