public import KeepAliveCore

/// Why the device's sleep could not be followed: what is missing and how to get it (`setup`),
/// or a step that failed (`failed`).
public enum SleepError: Error, Sendable, Equatable, DescribedError {
    /// What it needs could not be set up (the bus, a wake alarm, a wakelock): the reason.
    case setup(String)
    /// What it did failed: the reason.
    case failed(String)

    /// The reason, for a log or a terminal.
    public var description: String { "device sleep: \(reason)" }

    /// The reason alone.
    public var reason: String {
        switch self {
        case .setup(let reason), .failed(let reason): reason
        }
    }
}
