import Dispatch
import KeepAliveCore
import KeepAliveHostProtocol
import KeepAliveMonitoring

/// An app's conditions as the host keeps them: changed on a request of the app's, the file
/// written on the host's queue for files (an fsync waits on the disk), never on its executor.
extension LocationMonitor {
    /// `monitor`: adds `wanted` (all or none), at most `limit` conditions in all. One it has
    /// already, unchanged, keeps its state and last event: an app that registers its conditions
    /// at every launch hears no second entry.
    ///
    /// - Returns: its conditions' identifiers after.
    func add(
        _ wanted: [String: MonitorCondition],
        assuming: MonitorState,
        forApp id: String,
        limit: Int,
        on files: DispatchQueue
    ) async throws(HostError) -> [String] {
        let conditions = wanted.filter { record(for: $0.key)?.condition != $0.value }
        let added = conditions.keys.filter { record(for: $0) == nil }.count
        guard identifiers.count + added <= limit else {
            throw HostError(
                .notPermitted,
                "app \(id) has \(identifiers.count) conditions and may have at most \(limit) under this host: "
                    + "\(added) more were refused, none added. Remove some first"
            )
        }
        do {
            try await files.awaiting { () throws(MonitoringError) in try self.add(conditions, assuming: assuming) }
        } catch {
            throw HostError(.badRequest, "app \(id): \(error.message); none added")
        }
        return identifiers
    }

    /// `unmonitor`: removes conditions by identifier.
    ///
    /// - Returns: its conditions' identifiers after.
    func remove(_ removed: [String], forApp id: String, on files: DispatchQueue) async throws(HostError) -> [String] {
        do {
            try await files.awaiting { () throws(MonitoringError) in
                for identifier in removed { try self.remove(identifier) }
            }
        } catch {
            throw HostError(.badRequest, "app \(id): \(error.message)")
        }
        return identifiers
    }
}
