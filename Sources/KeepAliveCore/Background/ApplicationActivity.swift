/// What an app does that a host outside it must know of: the same things the execution
/// policy counts. ``Application/onActivity`` reports them as they happen, so a host (the
/// `keepalive host` daemon) can apply its own copy of the rules.
public enum ApplicationActivity: Sendable, Hashable {
    /// A background task began (its number in this app, and its name).
    case backgroundTaskBegan(BackgroundTaskIdentifier, name: String)
    /// A background task ended.
    case backgroundTaskEnded(BackgroundTaskIdentifier)
    /// Audio started (true) or stopped (false) playing.
    case audioPlayback(Bool)
    /// Location activity started (true) or stopped (false).
    case locationActivity(Bool)
    /// A scheduled request was submitted (`delay`: how long from now it may begin).
    case scheduledRequestSubmitted(BackgroundTaskRequest, delay: Duration?)
    /// A scheduled task the app was running ended (completed by the app).
    case scheduledTaskCompleted(String, success: Bool)
}
