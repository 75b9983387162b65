import FoundationEssentials
import KeepAliveHost
import KeepAliveCore
import KeepAliveMonitoring
import KeepAliveSleep

/// The host's events as human lines or NDJSON.
struct HostOutput: Sendable {
    let json: Bool

    func write(_ event: AppHost.Event) {
        var object = JSONLine(["time": .time(Date())])
        let text = describeLife(event, in: &object) ?? describeOther(event, in: &object)
        if json {
            Console.out(object.bytes)
        } else if case .error = event {
            Console.error("keepalive host: \(text)\n")
        } else {
            Console.out(text + "\n")
        }
    }

    /// The host's start and its apps' lives (launches, lifecycle, freezes, thaws, wakes), or `nil`.
    private func describeLife(_ event: AppHost.Event, in object: inout JSONLine) -> String? {
        let text: String
        switch event {
        case .started(let freezer, let reason, let socket):
            object["event"] = "started"
            object["freezer"] = .string(freezer.rawValue)
            object["reason"] = .string(reason)
            object["socket"] = .string(socket)
            text = "host started: freezer \(freezer) (\(reason)); socket \(socket)"
        case .adopted(let app, _):
            object["event"] = "adopted"
            object["app"] = .string(app)
            text = "\(app): found a group left by an earlier host, thawed"
        case .launched(let app, let pid):
            object["event"] = "launched"
            object["app"] = .string(app)
            object["pid"] = .integer(Int(pid))
            text = "\(app): launched, pid \(pid)"
        case .lifecycle(let app, let appEvent):
            object["event"] = "lifecycle"
            object["app"] = .string(app)
            object["lifecycle"] = .string("\(appEvent)")
            text = "\(app): \(appEvent)"
        case .frozen(let app, let latency, let answered):
            object["event"] = "frozen"
            object["app"] = .string(app)
            object["latency"] = .number(latency.seconds)
            object["answered"] = answered.map(JSONLine.Value.bool) ?? .null
            let note = answered.map { $0 ? " (it answered the notice)" : " (it did not answer the notice in time)" }
            text = "\(app): frozen in \(latency.millisecondsText)\(note ?? " (not connected: no notice)")"
        case .thawed(let app, let latency):
            object["event"] = "thawed"
            object["app"] = .string(app)
            object["latency"] = .number(latency.seconds)
            text = "\(app): thawed in \(latency.millisecondsText)"
        case .wokenForData(let app):
            object["event"] = "woken"
            object["app"] = .string(app)
            object["reason"] = .string("data")
            text = "\(app): woken: data on a socket it named"
        case .wakePutOff(let app, let cause, let after):
            object["event"] = "wake-put-off"
            object["app"] = .string(app)
            object["cause"] = .string(cause)
            object["after"] = .number(after.seconds)
            text = "\(app): not woken for \(cause): its wake budget is spent; the next wake in \(after.secondsText)"
        default:
            return nil
        }
        return text
    }

    /// The rest: ends, escapes, location events, the watch, refusals, errors, the stop.
    private func describeOther(_ event: AppHost.Event, in object: inout JSONLine) -> String {
        let text: String
        switch event {
        case .killed(let app, let reason):
            object["event"] = "killed"
            object["app"] = .string(app)
            object["reason"] = .string(reason)
            text = "\(app): killed: \(reason)"
        case .escaped(let app, let escape):
            object["event"] = "escaped"
            object["app"] = .string(app)
            object["pid"] = .integer(Int(escape.pid))
            object["command"] = .string(escape.command)
            object["to"] = .string(escape.place)
            text = "\(app): \(escape): killed"
        case .exited(let app, let status):
            object["event"] = "exited"
            object["app"] = .string(app)
            object["status"] = .integer(Int(status))
            text = "\(app): exited with status \(status)"
        case .locationEvent(let app, let monitorEvent, let delivery):
            object["event"] = "location-event"
            object["app"] = .string(app)
            object["identifier"] = .string(monitorEvent.identifier)
            object["state"] = .string(monitorEvent.state.rawValue)
            object["date"] = .time(monitorEvent.date)
            object["delivery"] = .string("\(delivery)")
            text = "\(app): \(monitorEvent.identifier) \(monitorEvent.state) at \(ISO8601Text.string(monitorEvent.date)): \(delivery)"
        case .watching(let open):
            object["event"] = "watching"
            object["open"] = .bool(open)
            text = open ? "watching the receiver for the apps' conditions" : "left the receiver: no app's conditions are watched"
        case .refused(let why):
            object["event"] = "refused"
            object["message"] = .string(why)
            text = "refused: \(why)"
        case .error(let message):
            object["event"] = "error"
            object["message"] = .string(message)
            text = "error: \(message)"
        case .sleep(let notice):
            object["event"] = "sleep"
            Output.describe(sleep: notice, in: &object)
            text = notice.description
        case .stopped:
            object["event"] = "stopped"
            text = "host stopped"
        default:
            return "\(event)"
        }
        return text
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
    var millisecondsText: String { "\((seconds * 1000).fixed(2)) ms" }
}
