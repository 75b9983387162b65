/// Where an application is in its life, as iOS names the states.
public enum AppState: String, Sendable, Hashable, Codable, CustomStringConvertible {
    /// Not launched, or terminated.
    case notRunning
    /// In the foreground, not receiving events (launching, or on the way to or from the background).
    case inactive
    /// In the foreground and receiving events.
    case active
    /// In the background, and its code runs.
    case background
    /// In the background, and its code does not run: no timers, no callbacks.
    case suspended

    /// In the foreground: active, or inactive on its way in or out. The one home of the rule
    /// the host, the simulator, the location manager and authorization's "allow once" share.
    public var isInForeground: Bool { self == .active || self == .inactive }

    /// Whether the app's own code runs in this state.
    public var isRunning: Bool { self != .notRunning && self != .suspended }

    /// The state's name, as the tool prints it.
    public var description: String { rawValue }
}
