public import KeepAliveCore
import KeepAliveBus

/// Why the GeoClue2 service could not start or stopped.
public enum GeoClueError: Error, Sendable, DescribedError {
    /// libsystemd, the bus or the bus name: what is missing, and how to get it.
    case setup(String)
    /// The connection to the bus failed while serving.
    case lost(String)

    /// What the bus layer said.
    init(_ failure: BusFailure) {
        switch failure {
        case .setup(let reason): self = .setup(reason)
        case .lost(let reason): self = .lost(reason)
        }
    }

    /// The reason, for a log or a terminal.
    public var description: String {
        switch self {
        case .setup(let reason): "GeoClue2 service: \(reason)"
        case .lost(let reason): "GeoClue2 service: \(reason)"
        }
    }
}
