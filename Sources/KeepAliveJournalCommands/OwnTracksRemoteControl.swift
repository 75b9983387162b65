import FoundationEssentials
import KeepAliveCommands
import KeepAliveCore
import KeepAliveDelivery
import KeepAliveJournal
import KeepAliveMonitoring
import KeepAliveService
import Logging

/// The OwnTracks remote commands of the `keepalive run` service: a device session
/// (``OwnTracksSession``) per OwnTracks MQTT destination, and the answers of each OwnTracks
/// Recorder over HTTP (commands come in the answers to its POSTs), each command carried out on
/// the running service, each one refused noted with the reason and nothing changed.
///
/// - `reportLocation`: a fresh fix, journaled, and every deliverer told to send at once.
/// - `setWaypoints`, `clearWaypoints`: the waypoints' regions replaced in the monitor (the
///   service's own or the host's) and the `--waypoints` file rewritten, so a restart keeps them.
/// - `waypoints`: the set published on `TOPIC/waypoints`; `dump`: the configuration, without
///   secrets, on `TOPIC/dump`, both through the session the command came by (over HTTP, posted).
struct OwnTracksRemoteControl: RemoteControl {
    let sessions: [OwnTracksSession]
    /// The OwnTracks Recorders delivered to over HTTP.
    let recorders: [HTTPTransport]
    let waypoints: WaypointStore
    let delivery: JournalDelivery?
    /// Commits the answer at once, so it is delivered without waiting for its group.
    let writer: JournalWriter
    let logger = Logger(label: "keepalive.owntracks")

    var commandSockets: [Int32] { sessions.compactMap(\.commandSocket) }

    func run(controlling device: RemoteDevice) async {
        await withDiscardingTaskGroup { group in
            for session in sessions {
                group.addTask {
                    do {
                        try await session.run { received in await carryOut(received, from: .mqtt(session), on: device) }
                    } catch {
                        device.note("OwnTracks session \(session.settings.topic): \(error)")
                    }
                }
            }
            for recorder in recorders {
                let (answers, arrive) = AsyncStream.makeStream(of: Data.self)
                recorder.onAnswer { arrive.yield($0) }
                group.addTask {
                    for await answer in answers {
                        let encryption: OwnTracksEncryption?
                        do {
                            encryption = try recorder.settings.keyFile.map { try OwnTracksEncryption(keyFile: $0.path) }
                        } catch {
                            device.note("\(recorder.settings.url): its answer not read: \(error)")
                            continue
                        }
                        for received in OwnTracksCommand.commands(inAnswer: answer, encryption: encryption) {
                            await carryOut(received, from: .http(recorder), on: device)
                        }
                    }
                }
            }
        }
    }

    /// Where a command came from, and where its answer goes.
    enum Channel {
        case mqtt(OwnTracksSession)
        case http(HTTPTransport)

        /// The command topic, or the Recorder's URL.
        var name: String {
            switch self {
            case .mqtt(let session): session.settings.topic + "/cmd"
            case .http(let recorder): recorder.settings.url
            }
        }

        /// Publishes `json` on `TOPIC` + `subtopic`, or posts it.
        func answer(_ json: String, on subtopic: String) async throws(CommandFailure) {
            let failure: String? =
                switch self {
                case .mqtt(let session): session.publish(json, on: subtopic)
                case .http(let recorder): await recorder.post(json)
                }
            if let failure { throw CommandFailure(failure) }
        }

        /// Where the answer went, in words.
        func place(_ subtopic: String) -> String {
            switch self {
            case .mqtt(let session): "published on \(session.settings.topic)\(subtopic)"
            case .http(let recorder): "posted to \(recorder.settings.url)"
            }
        }

        func configuration(waypoints: [OwnTracksWaypoint], mode: ReportingMode?) -> String {
            switch self {
            case .mqtt(let session):
                session.configuration(
                    waypoints: waypoints, monitoring: mode?.kind.rawValue, displacement: mode?.displacement,
                    interval: mode?.interval.components.seconds
                )
            case .http(let recorder):
                recorder.configuration(
                    waypoints: waypoints, monitoring: mode?.kind.rawValue, displacement: mode?.displacement,
                    interval: mode?.interval.components.seconds
                )
            }
        }
    }

    private func carryOut(_ received: OwnTracksSession.Received, from channel: Channel, on device: RemoteDevice) async {
        let topic = channel.name
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
                await writer.commit()
                delivery?.sendNow()
                device.note("\(topic): reportLocation answered with the fix of \(fix.timestamp.map(ISO8601Text.string) ?? "now")")
            case .setWaypoints(let list):
                let before = await waypoints.current.count
                try await waypoints.replace(with: list, on: device)
                if list.isEmpty {
                    // What a Recorder's reply file can hold by mistake: as clearWaypoints, said so.
                    logger.warning("setWaypoints with an empty list removed every waypoint", metadata: ["topic": "\(topic)", "removed": "\(before)"])
                    device.note("\(topic): setWaypoints with an empty list: all \(before) waypoints removed, none watched (as clearWaypoints)")
                } else {
                    device.note("\(topic): setWaypoints: \(list.count) waypoints watched (\(before) before), kept in \(waypoints.file?.path ?? "")")
                }
            case .clearWaypoints:
                let before = await waypoints.current.count
                try await waypoints.replace(with: [], on: device)
                device.note("\(topic): clearWaypoints: all \(before) waypoints removed, none watched")
            case .waypoints:
                try await channel.answer(OwnTracksWaypoint.document(await waypoints.current), on: "/waypoints")
                device.note("\(topic): waypoints \(channel.place("/waypoints"))")
            case .dump:
                try await channel.answer(channel.configuration(waypoints: await waypoints.current, mode: device.mode()), on: "/dump")
                device.note("\(topic): dump \(channel.place("/dump"))")
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
}
