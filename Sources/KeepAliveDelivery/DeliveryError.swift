public import KeepAliveCore

/// A destination that cannot be used as given.
public enum DeliveryError: Error, Sendable, Hashable, DescribedError {
    /// The destination (first) cannot be used, and why (second).
    case badDestination(String, String)
    /// The password file is missing, unreadable or readable by others.
    case passwordFile(String, String)

    /// What is wrong and what to do.
    public var description: String {
        switch self {
        case .badDestination(let text, let reason): "destination \(Destination.redacted(text)): \(reason)"
        case .passwordFile(let path, let reason): "password file \(path): \(reason)"
        }
    }
}
