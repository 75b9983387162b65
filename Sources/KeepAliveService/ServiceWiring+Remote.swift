import FoundationEssentials
import KeepAliveCore
import KeepAliveMonitoring

extension ServiceWiring {
    /// What a remote command may ask of this service: a fresh fix (journaled and told like a
    /// poll's), and changes of the monitoring strategy's conditions and reporting mode.
    func remoteDevice() -> RemoteDevice {
        let (conditions, post, emit) = (conditions, post, emit)
        let record: @Sendable (Location) -> Void = { fix in self.record(fix) }
        let notMonitoring = MonitoringError(.invalidCondition, "the service watches no regions: run it with --strategy monitoring")
        return RemoteDevice(
            reportLocation: { [locationManager] in
                // As an app answering a push does: location activity, so the model (and a host)
                // keeps the app running until the fix is taken.
                post(.beginLocationActivity)
                defer { post(.endLocationActivity) }
                // Newer than any fix the manager has seen: a receiver may give its current fix
                // again as a session opens, and the answer must be one taken after the command.
                let fix = try await Self.fix(from: locationManager, newerThan: locationManager.location?.timestamp)
                record(fix)
                conditions?.journaled(fix)
                emit(.poll(.success(fix)))
                return fix
            },
            changeConditions: { removing, adding in
                guard let conditions else { throw notMonitoring }
                try await conditions.change(removing: removing, adding: adding)
            },
            mode: { conditions?.mode },
            setMode: { mode in
                guard let conditions else { throw notMonitoring }
                try await conditions.setMode(mode)
            },
            note: { emit(.decision($0)) }
        )
    }

    /// The first fix of `manager` newer than `seen` (any, without it), within `timeout`.
    private static func fix(from manager: LocationManager, newerThan seen: Date?, timeout: Duration = .seconds(30)) async throws -> Location {
        try await withThrowingTaskGroup(of: Location?.self) { group in
            group.addTask {
                for try await update in manager.updates() {
                    guard case .location(let fix) = update else { continue }
                    if let seen, let time = fix.timestamp, time <= seen { continue }
                    return fix
                }
                return nil
            }
            group.addTask {
                try await DispatchClock().sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let fix = first else {
                throw LocationError(.locationUnknown, "no fix newer than the last one within \(timeout.secondsText)")
            }
            return fix
        }
    }
}
