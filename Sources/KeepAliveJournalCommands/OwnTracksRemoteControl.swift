import FoundationEssentials
import Glibc
import KeepAliveCommands
import KeepAliveCore
import KeepAliveDelivery
import KeepAliveMonitoring
import KeepAliveService
import Logging

/// The OwnTracks remote commands of the `keepalive run` service: a device session
/// (``OwnTracksSession``) per OwnTracks MQTT destination, each command carried out on the
/// running service, each one refused noted with the reason and nothing changed.
///
/// - `reportLocation`: a fresh fix, journaled, and every deliverer told to send at once.
/// - `setWaypoints`, `clearWaypoints`: the waypoints' regions replaced in the monitor (the
///   service's own or the host's) and the `--waypoints` file rewritten, so a restart keeps them.
/// - `waypoints`: the set published on `TOPIC/waypoints`; `dump`: the configuration, without
///   secrets, on `TOPIC/dump`, both through the session the command came by.
struct OwnTracksRemoteControl: RemoteControl {
    let sessions: [OwnTracksSession]
    let waypoints: WaypointStore
    let delivery: JournalDelivery?
    let logger = Logger(label: "keepalive.owntracks")

    var commandSockets: [Int32] { sessions.compactMap(\.commandSocket) }

    func run(controlling device: RemoteDevice) async {
        await withDiscardingTaskGroup { group in
            for session in sessions {
                group.addTask {
                    do {
                        try await session.run { received in await carryOut(received, from: session, on: device) }
                    } catch {
                        device.note("OwnTracks session \(session.settings.topic): \(error)")
                    }
                }
            }
        }
    }

    private func carryOut(_ received: OwnTracksSession.Received, from session: OwnTracksSession, on device: RemoteDevice) async {
        let topic = session.settings.topic + "/cmd"
        let command: OwnTracksCommand
        switch received {
        case .failure(let error):
            logger.warning("a command was ignored", metadata: ["topic": "\(topic)", "reason": "\(error)"])
            device.note("\(topic): \(error)")
            return
        case .success(let taken): command = taken
        }
        device.note("\(topic): \(command.action) received")
        do {
            switch command {
            case .reportLocation:
                let fix = try await device.reportLocation()
                delivery?.sendNow()
                device.note("\(topic): reportLocation answered with the fix of \(fix.timestamp.map(ISO8601Text.string) ?? "now")")
            case .setWaypoints(let list):
                try await waypoints.replace(with: list, on: device)
                device.note("\(topic): setWaypoints: \(list.count) waypoints watched, kept in \(waypoints.file?.path ?? "")")
            case .clearWaypoints:
                try await waypoints.replace(with: [], on: device)
                device.note("\(topic): clearWaypoints: no waypoints watched")
            case .waypoints:
                try answer(OwnTracksWaypoint.document(await waypoints.current), on: "/waypoints", through: session)
                device.note("\(topic): waypoints published on \(session.settings.topic)/waypoints")
            case .dump:
                let mode = device.mode()
                let configuration = session.configuration(
                    waypoints: await waypoints.current,
                    monitoring: mode?.kind.rawValue,
                    displacement: mode?.displacement,
                    interval: mode?.interval.components.seconds
                )
                try answer(configuration, on: "/dump", through: session)
                device.note("\(topic): dump published on \(session.settings.topic)/dump")
            case .setConfiguration(let change):
                let mode = try Self.mode(changedBy: change, from: device.mode())
                try await device.setMode(mode)
                device.note("\(topic): setConfiguration: reporting in \(mode) mode")
            }
        } catch {
            logger.warning("a command failed", metadata: ["topic": "\(topic)", "action": "\(command.action)", "reason": "\(error)"])
            device.note("\(topic): \(command.action) not done: \(error)")
        }
    }

    /// The mode `change` makes of `current`.
    static func mode(changedBy change: OwnTracksConfigurationChange, from current: ReportingMode?) throws(CommandFailure) -> ReportingMode {
        guard let kind = change.monitoring.flatMap(ReportingMode.Kind.init(rawValue:)) ?? current?.kind else {
            throw CommandFailure("the service has no monitoring mode yet: give monitoring (-1, 0, 1 or 2) with locatorDisplacement or locatorInterval")
        }
        var mode = current ?? ReportingMode(kind)
        mode.kind = kind
        if let displacement = change.locatorDisplacement { mode.displacement = displacement }
        if let interval = change.locatorInterval {
            guard (1...86_400).contains(interval) else { throw CommandFailure("locatorInterval must be 1 to 86400 seconds, not \(interval)") }
            mode.interval = .milliseconds(Int64(interval * 1000))
        }
        return mode
    }

    private func answer(_ json: String, on subtopic: String, through session: OwnTracksSession) throws(CommandFailure) {
        if let error = session.publish(json, on: subtopic) { throw CommandFailure(error) }
    }
}

/// Why a command could not be carried out.
struct CommandFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The waypoints the service watches, kept in the `--waypoints` file: read at the start, and
/// rewritten when a command replaces them.
actor WaypointStore {
    /// The `--waypoints` file, if one was given.
    let file: URL?
    /// The waypoints watched now.
    private(set) var current: [OwnTracksWaypoint]

    init(file: URL?, waypoints: [OwnTracksWaypoint]) {
        self.file = file
        self.current = waypoints
    }

    /// Watches `waypoints` instead of the current ones: the file written aside, the monitor
    /// changed, then the file put in place. Either all of it happens or nothing does.
    func replace(with waypoints: [OwnTracksWaypoint], on device: RemoteDevice) async throws {
        guard let file else {
            throw CommandFailure("the service keeps waypoints in the --waypoints FILE it starts with, and it was started without one")
        }
        let adding = try OwnTracksWaypoint.conditions(of: waypoints)
        let removing = Set(current.map(\.identifier))
        let aside = file.path + ".new"
        do {
            try Data((OwnTracksWaypoint.document(waypoints) + "\n").utf8).write(to: URL(fileURLWithPath: aside))
        } catch {
            throw CommandFailure("cannot write \(aside): \(error.fileErrorText)")
        }
        do {
            try await device.changeConditions(removing, adding)
        } catch {
            unlink(aside)
            throw error
        }
        guard rename(aside, file.path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(aside)
            throw CommandFailure("the regions changed, but \(file.path) could not be replaced (\(reason)): a restart would watch the old ones")
        }
        current = waypoints
    }
}
