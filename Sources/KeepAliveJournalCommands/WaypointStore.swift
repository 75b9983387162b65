import FoundationEssentials
import Glibc
import KeepAliveCore
import KeepAliveDelivery
import KeepAliveService

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
