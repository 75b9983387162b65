import Dispatch
import FoundationEssentials
import Glibc
import KeepAliveCore
import Logging
import KeepAliveHostProtocol

/// What the host keeps of an app beside its monitor (`APP.launch` in the monitor folder,
/// written atomically), so that the next host, after a crash or a power cut, launches it for
/// its events and due tasks as this one would have, and never one its user quit.
struct AppLaunchRecord: Codable, Sendable, Hashable {
    var command: [String]
    /// The user it runs as, by id (looked up again on reading).
    var uid: UInt32
    var modes: [String]
    var output: String?
    var environment: [String: String]
    /// The user quit it (`terminate`): it is not launched again for anything.
    var terminated: Bool
    /// Scheduled work waiting for it.
    var tasks: [ScheduledTask]
    /// Its first process while it runs, with that process's start time: the signal freezer has
    /// no group to find again, so the next host takes the app back by these.
    var leader: Int32?
    var leaderStart: UInt64?

    struct ScheduledTask: Codable, Sendable, Hashable {
        var identifier: String
        var kind: String
        /// When it may begin, by the wall clock (`nil`: at once).
        var begins: Date?
        var power: Bool
        var network: Bool
    }

    /// The record's file for `app` in `folder`.
    static func file(for app: String, in folder: URL) -> URL { folder.appendingPathComponent("\(app).launch") }

    /// Every record in `folder`, by app id; a file that cannot be read is named in `failures`.
    static func all(in folder: URL) -> (records: [String: AppLaunchRecord], failures: [String]) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return ([:], []) }
        var records: [String: AppLaunchRecord] = [:]
        var failures: [String] = []
        for name in names where name.hasSuffix(".launch") && !name.hasPrefix(".") {
            let file = folder.appendingPathComponent(name)
            do {
                let record = try JSONDecoder().decode(AppLaunchRecord.self, from: Data(contentsOf: file))
                records[String(name.dropLast(".launch".count))] = record
            } catch {
                failures.append("cannot read \(file.path) (\(error)): remove it, or launch the app again")
            }
        }
        return (records, failures)
    }
}

extension AppHost {
    /// Writes `app`'s record: its launch, whether its user quit it, its scheduled work. Written
    /// on the host's queue for files, in the order asked (``recordsSaved()`` waits for them).
    func saveRecord(of app: HostedApp) {
        guard let folder = configuration.monitorFolder, let spec = app.launchSpec, let model = value(of: app)?.model else { return }
        let now = Date()
        let record = AppLaunchRecord(
            command: spec.command,
            uid: spec.user.uid,
            modes: spec.modes.names,
            output: spec.output,
            environment: spec.environment,
            terminated: value(of: app)?.machine.isQuitByUser ?? false,
            tasks: model.pendingTaskRequests.map { request in
                AppLaunchRecord.ScheduledTask(
                    identifier: request.identifier,
                    kind: request.kind.rawValue,
                    begins: request.earliestBeginDate.map { now.addingTimeInterval(($0 - model.now).secondsValue) },
                    power: request.requiresExternalPower,
                    network: request.requiresNetworkConnectivity
                )
            },
            leader: app.pid,
            leaderStart: nil
        )
        let (id, emit) = (app.id, emit)
        files.async {
            var record = record
            record.leaderStart = record.leader.flatMap(ProcFS.startTime(of:))
            do {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                encoder.dateEncodingStrategy = .iso8601
                try AtomicFile.write(encoder.encode(record), to: AppLaunchRecord.file(for: id, in: folder))
            } catch {
                emit(.error("cannot keep \(id)'s launch record in \(folder.path): \(error); a host started after this one will not launch it for its events"))
            }
        }
    }

    /// Waits until every record asked for so far is written.
    func recordsSaved() async {
        await files.awaiting {}
    }
}

extension AppLaunchRecord {
    /// Its scheduled work, as requests on a host's clock that starts `now`: a begin date that
    /// passed is due at once; a kind this host does not know is left out.
    func taskRequests(from now: Date) -> [BackgroundTaskRequest] {
        tasks.compactMap { task in
            guard let kind = BackgroundTaskRequest.Kind(rawValue: task.kind) else { return nil }
            return BackgroundTaskRequest(
                identifier: task.identifier,
                kind: kind,
                earliestBeginDate: task.begins.map { .milliseconds(Int64(max(0, $0.timeIntervalSince(now)) * 1000)) },
                requiresExternalPower: task.power,
                requiresNetworkConnectivity: task.network
            )
        }
    }
}
