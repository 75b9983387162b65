public import FoundationEssentials

/// An error of this package, whose `description` says what went wrong and what to do: as a
/// `LocalizedError`, Foundation's `localizedDescription` says the same words (not "The operation
/// could not be completed"), so code that logs errors the Foundation way keeps the message.
public protocol DescribedError: LocalizedError, CustomStringConvertible {}

extension DescribedError {
    /// The error's `description`: what `localizedDescription` gives.
    public var errorDescription: String? { description }
    /// None: `description` says why.
    public var failureReason: String? { nil }
    /// None: `description` says what to do.
    public var recoverySuggestion: String? { nil }
    /// None.
    public var helpAnchor: String? { nil }
}
