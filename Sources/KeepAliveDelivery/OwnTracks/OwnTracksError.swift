public import KeepAliveCore

/// OwnTracks input or output that cannot be used.
public enum OwnTracksError: Error, Sendable, Hashable, DescribedError {
    /// A waypoints document that is not one, and why.
    case badWaypoints(String)
    /// An encrypted payload that cannot be sealed or opened, and why.
    case encryption(String)
    /// A remote command the device does not take, and why (it is ignored).
    case badCommand(String)

    /// What is wrong.
    public var description: String {
        switch self {
        case .badWaypoints(let reason): "waypoints: \(reason)"
        case .encryption(let reason): "encrypted payload: \(reason)"
        case .badCommand(let reason): "command ignored: \(reason)"
        }
    }

    /// Whether it is a ``badCommand(_:)``.
    var isCommandError: Bool {
        if case .badCommand = self { return true }
        return false
    }
}
