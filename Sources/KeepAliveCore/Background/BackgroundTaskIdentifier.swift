/// Names one background task, as `UIBackgroundTaskIdentifier`.
public struct BackgroundTaskIdentifier: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The number the application gave it.
    public let rawValue: Int
    /// The task numbered `rawValue`.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// What `beginBackgroundTask` returns when a task is not allowed (not running, suspended).
    public static let invalid = BackgroundTaskIdentifier(rawValue: 0)

    /// `#N`, or `invalid`.
    public var description: String { self == .invalid ? "invalid" : "#\(rawValue)" }
}
