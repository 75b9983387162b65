import Foundation
import LocationKeepAlive

/// Writes fixes and events as human lines or NDJSON, flushed line by line.
struct Output {
    let json: Bool

    func write(_ location: Location) {
        if json {
            var object: [String: Any] = [
                "class": "fix", "latitude": location.latitude, "longitude": location.longitude,
                "mode": location.mode.rawValue,
            ]
            object["time"] = location.timestamp.map(Self.iso8601) ?? NSNull()
            object["horizontalAccuracy"] = location.horizontalAccuracy ?? NSNull()
            object["verticalAccuracy"] = location.verticalAccuracy ?? NSNull()
            object["altitudeHAE"] = location.altitudeHAE ?? NSNull()
            object["altitudeMSL"] = location.altitudeMSL ?? NSNull()
            object["speed"] = location.speed ?? NSNull()
            object["course"] = location.course ?? NSNull()
            object["quality"] = location.quality.map { $0.description } ?? NSNull()
            object["satellites"] = location.satellitesUsed ?? NSNull()
            object["device"] = location.device ?? NSNull()
            emit(object)
        } else {
            var line = String(
                format: "%@  %.7f, %.7f  %@",
                location.timestamp.map(Self.iso8601) ?? "(no time)",
                location.latitude,
                location.longitude,
                location.mode.description
            )
            if let accuracy = location.horizontalAccuracy { line += String(format: "  ±%.1f m", accuracy) }
            if let altitude = location.altitudeMSL { line += String(format: "  alt %.1f m", altitude) }
            if let speed = location.speed { line += String(format: "  %.2f m/s", speed) }
            Console.out(line + "\n")
        }
    }

    func write(_ status: LocationStatus) {
        if json {
            emit(["class": "status", "status": "\(status.kind)", "message": status.description])
        } else {
            Console.out("# \(status)\n")
        }
    }

    /// One service event, as a line.
    func write(_ event: KeepAliveService.Event) {
        switch event {
        case .fix(let location):
            write(location)
            return
        case .status(let status):
            write(status)
            return
        default: break
        }
        var object: [String: Any] = ["time": Self.iso8601(Date())]
        var text: String
        switch event {
        case .started(let profile, let strategy, let authorization):
            object["event"] = "started"
            object["profile"] = profile
            object["strategy"] = strategy
            object["authorization"] = authorization.rawValue
            text = "started: profile \(profile), strategy \(strategy), authorization \(authorization)"
        case .lifecycle(let appEvent):
            object["event"] = "lifecycle"
            object["lifecycle"] = "\(appEvent)"
            text = "\(appEvent)"
        case .decision(let decision):
            object["event"] = "decision"
            object["decision"] = decision
            text = decision
        case .poll(.success(let fix)):
            object["event"] = "poll"
            object["ok"] = true
            object["latitude"] = fix.latitude
            object["longitude"] = fix.longitude
            object["horizontalAccuracy"] = fix.horizontalAccuracy ?? NSNull()
            text = String(format: "poll: %.7f, %.7f", fix.latitude, fix.longitude)
        case .poll(.failure(let error)):
            object["event"] = "poll"
            object["ok"] = false
            object["error"] = error.message
            text = "poll failed: \(error.message)"
        case .pulse(let length, let device, let error):
            object["event"] = "pulse"
            object["seconds"] = length.seconds
            object["device"] = device
            object["error"] = error ?? NSNull()
            text = error.map { "pulse failed on \(device): \($0)" } ?? "pulse \(length.secondsText) on \(device)"
        case .authorizationChanged(let status):
            object["event"] = "authorization"
            object["authorization"] = status.rawValue
            text = "authorization changed to \(status)"
        case .callback:
            object["event"] = "callback"
            text = "callback"
        case .error(let message):
            object["event"] = "error"
            object["message"] = message
            text = "error: \(message)"
        case .stopped:
            object["event"] = "stopped"
            text = "stopped"
        case .fix, .status:
            return
        }
        if json {
            emit(object)
        } else {
            Console.out("[\(object["time"]!)] \(text)\n")
        }
    }

    /// Errors go to standard error, in words; in JSON mode also as an object on standard output.
    func write(error: any Error) {
        if json { emit(["class": "error", "message": "\(error)"]) }
        Console.error("keepalive: \(error)\n")
    }

    private func emit(_ object: [String: Any]) {
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return }
        Console.out(data + Data("\n".utf8))
    }

    static func iso8601(_ date: Date) -> String {
        date.formatted(
            .iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted)
        )
    }
}

extension LocationStatus {
    /// A stable one-word name for JSON output.
    var kind: String {
        switch self {
        case .connected: "connected"
        case .noFix: "noFix"
        case .fixLost: "fixLost"
        case .connectionLost: "connectionLost"
        case .reconnecting: "reconnecting"
        case .replayFinished: "replayFinished"
        case .authorizationChanged: "authorizationChanged"
        case .paused: "paused"
        case .resumed: "resumed"
        }
    }
}
