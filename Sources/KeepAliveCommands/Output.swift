import FoundationEssentials
import KeepAliveCore
import KeepAliveMonitoring
import KeepAliveService
import KeepAliveSleep

/// Writes fixes and events as human lines or NDJSON, flushed line by line.
package struct Output {
    package let json: Bool

    package init(json: Bool) {
        self.json = json
    }

    func write(_ location: Location) {
        if json {
            // Keys in sorted order, so the line is written without sorting.
            let line = JSONLine([
                "altitudeHAE": location.altitudeHAE.json, "altitudeMSL": location.altitudeMSL.json, "class": "fix",
                "course": location.course.json, "device": location.device.json,
                "horizontalAccuracy": location.horizontalAccuracy.json, "latitude": .number(location.latitude),
                "longitude": .number(location.longitude), "mode": .integer(location.mode.rawValue),
                "quality": location.quality.map { $0.description }.json,
                "satellites": location.satellitesUsed.map(JSONLine.Value.integer) ?? .null,
                "speed": location.speed.json, "time": location.timestamp.json,
                "verticalAccuracy": location.verticalAccuracy.json,
            ])
            Console.out(line.bytes)
        } else {
            var line = location.timestamp.map(ISO8601Text.string) ?? "(no time)"
            line += "  \(location.latitude.fixed(7)), \(location.longitude.fixed(7))  \(location.mode)"
            if let accuracy = location.horizontalAccuracy { line += "  ±\(accuracy.fixed(1)) m" }
            if let altitude = location.altitudeMSL { line += "  alt \(altitude.fixed(1)) m" }
            if let speed = location.speed { line += "  \(speed.fixed(2)) m/s" }
            Console.out(line + "\n")
        }
    }

    /// A monitor's event: the condition, its new state, and the fix that decided it.
    func write(_ event: MonitorEvent) {
        let fix = event.location
        if json {
            var line = JSONLine([
                "class": "event", "horizontalAccuracy": fix.horizontalAccuracy.json, "identifier": .string(event.identifier),
                "latitude": .number(fix.latitude), "longitude": .number(fix.longitude), "state": .string(event.state.rawValue),
                "time": .time(event.date),
            ])
            if let visit = event.visit {
                line["visitArrival"] = .time(visit.arrival)
                line["visitDeparture"] = visit.departure.json
                line["visitLatitude"] = .number(visit.coordinate.latitude)
                line["visitLongitude"] = .number(visit.coordinate.longitude)
            }
            Console.out(line.bytes)
        } else {
            var line = "\(ISO8601Text.string(event.date))  \(event.identifier) \(event.state)"
            line += "  at \(fix.latitude.fixed(7)), \(fix.longitude.fixed(7))"
            if let accuracy = fix.horizontalAccuracy { line += " ±\(accuracy.fixed(1)) m" }
            if let visit = event.visit {
                line += "  visit from \(ISO8601Text.string(visit.arrival))"
                if let departure = visit.departure { line += " to \(ISO8601Text.string(departure))" }
            }
            Console.out(line + "\n")
        }
    }

    /// A connection status, with the moment it was written (JSON).
    func write(_ status: LocationStatus) {
        if json {
            Console.out(
                JSONLine(["class": "status", "message": "\(status)", "status": "\(status.kind)", "time": .time(Date())])
                    .bytes
            )
        } else {
            Console.out("# \(status)\n")
        }
    }

    /// The last line of a command stopped by a signal: the stop was clean, and when it ended.
    func writeStopped() {
        if json {
            Console.out(JSONLine(["class": "status", "message": "stopped", "status": "stopped", "time": .time(Date())]).bytes)
        } else {
            Console.out("# stopped\n")
        }
    }

    /// One service event, as a line.
    func write(_ event: KeepAliveService.Event) {
        switch event {
        case .fix(let location): return write(location)
        case .status(let status): return write(status)
        case .locationEvent(let event): return write(event)
        default: break
        }
        let now = Date()
        var object = JSONLine(["time": .time(now)])
        var text: String
        switch event {
        case .started(let profile, let strategy, let authorization):
            object["event"] = "started"
            object["profile"] = .string(profile)
            object["strategy"] = .string(strategy)
            object["authorization"] = .string(authorization.rawValue)
            text = "started: profile \(profile), strategy \(strategy), authorization \(authorization)"
        case .lifecycle(let appEvent):
            object["event"] = "lifecycle"
            object["lifecycle"] = "\(appEvent)"
            text = "\(appEvent)"
        case .decision(let decision):
            object["event"] = "decision"
            object["decision"] = .string(decision)
            text = decision
        case .poll(let result):
            text = Self.describe(poll: result, in: &object)
        case .pulse(let length, let device, let error):
            object["event"] = "pulse"
            object["seconds"] = .number(length.seconds)
            object["device"] = .string(device)
            object["error"] = error.json
            text = error.map { "pulse failed on \(device): \($0)" } ?? "pulse \(length.secondsText) on \(device)"
        case .authorizationChanged(let status):
            object["event"] = "authorization"
            object["authorization"] = .string(status.rawValue)
            text = "authorization changed to \(status)"
        case .callback:
            object["event"] = "callback"
            text = "callback"
        case .error(let message):
            object["event"] = "error"
            object["message"] = .string(message)
            text = "error: \(message)"
        case .stopped:
            object["event"] = "stopped"
            text = "stopped"
        case .sleep(let notice):
            object["event"] = "sleep"
            Self.describe(sleep: notice, in: &object)
            text = notice.description
        case .receiver(let note):
            object["event"] = "receiver"
            Self.describe(receiver: note, in: &object)
            text = note.description
        case .fix, .status, .locationEvent:
            return
        }
        if json {
            Console.out(object.bytes)
        } else {
            Console.out("[\(ISO8601Text.string(now))] \(text)\n")
        }
    }

    /// A change of the receiver's power, in `object`: `"receiver": "on"`, `"off"`, `"fixed"`,
    /// `"failed"` or `"refreshing"`, with the way, the start and the seconds.
    static func describe(receiver note: ReceiverPowerNote, in object: inout JSONLine) {
        switch note {
        case .on(let way, let start):
            (object["receiver"], object["way"], object["start"]) = ("on", .string(way.rawValue), .string(start.rawValue))
        case .fixed(let start, let time):
            (object["receiver"], object["start"], object["time_to_fix"]) = ("fixed", .string(start.rawValue), .number(time.seconds))
        case .off(let way, let wasOn):
            (object["receiver"], object["way"], object["seconds_on"]) = ("off", .string(way.rawValue), .number(wasOn.seconds))
        case .failed(let way, let reason):
            (object["receiver"], object["way"], object["message"]) = ("failed", .string(way.rawValue), .string(reason))
        case .refreshing(let time):
            (object["receiver"], object["seconds"]) = ("refreshing", .number(time.seconds))
        }
    }

    /// A poll's result, in `object` and in words.
    private static func describe(poll result: Result<Location, LocationError>, in object: inout JSONLine) -> String {
        object["event"] = "poll"
        switch result {
        case .success(let fix):
            object["ok"] = true
            object["latitude"] = .number(fix.latitude)
            object["longitude"] = .number(fix.longitude)
            object["horizontalAccuracy"] = fix.horizontalAccuracy.json
            object["fixTime"] = fix.timestamp.json
            return "poll: \(fix.latitude.fixed(7)), \(fix.longitude.fixed(7))" + (fix.timestamp.map { " at \(ISO8601Text.string($0))" } ?? "")
        case .failure(let error):
            object["ok"] = false
            object["error"] = .string(error.message)
            return "poll failed: \(error.message)"
        }
    }

    /// Errors go to standard error, in words; in JSON mode also as an object on standard output.
    package func write(error: any Error) {
        if json { Console.out(JSONLine(["class": "error", "message": "\(error)"]).bytes) }
        Console.error("keepalive: \(error)\n")
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
        case .replayLooped: "replayLooped"
        case .authorizationChanged: "authorizationChanged"
        case .paused: "paused"
        case .resumed: "resumed"
        case .receiverTimeWentBack: "receiverTimeWentBack"
        }
    }
}
