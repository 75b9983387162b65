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
            FileHandle.standardOutput.write(Data((line + "\n").utf8))
        }
    }

    func write(_ status: LocationStatus) {
        if json {
            emit(["class": "status", "status": "\(status.kind)", "message": status.description])
        } else {
            FileHandle.standardOutput.write(Data("# \(status)\n".utf8))
        }
    }

    /// Errors go to standard error, in words; in JSON mode also as an object on standard output.
    func write(error: any Error) {
        if json { emit(["class": "error", "message": "\(error)"]) }
        FileHandle.standardError.write(Data("keepalive: \(error)\n".utf8))
    }

    private func emit(_ object: [String: Any]) {
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return }
        FileHandle.standardOutput.write(data + Data("\n".utf8))
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
