/// A change in an application's life, named like UIApplication's notifications.
public enum AppEvent: Sendable, Hashable, CustomStringConvertible {
    /// Launched (`application(_:didFinishLaunchingWithOptions:)`).
    case didFinishLaunching
    /// About to leave the foreground.
    case willResignActive
    /// In the background: its background time starts.
    case didEnterBackground
    /// On its way back to the foreground.
    case willEnterForeground
    /// In the foreground, active.
    case didBecomeActive
    /// About to stop by itself (not sent when the policy kills it).
    case willTerminate
    /// The execution policy stopped the app's code (not a UIKit notification: iOS says nothing).
    case suspended(SuspensionCause)
    /// The app's code runs again after a suspension.
    case resumed
    /// The app was killed; `willTerminate` is not sent for these.
    case terminated(TerminationReason)
    /// A scheduled request began to run (its identifier).
    case scheduledTaskStarted(String)
    /// A scheduled task ended: completed by the app, or its time ran out.
    case scheduledTaskEnded(String, completed: Bool)

    /// The event in words, as traces print it.
    public var description: String {
        switch self {
        case .didFinishLaunching: "did finish launching"
        case .willResignActive: "will resign active"
        case .didEnterBackground: "did enter background"
        case .willEnterForeground: "will enter foreground"
        case .didBecomeActive: "did become active"
        case .willTerminate: "will terminate"
        case .suspended(let cause): "suspended (\(cause))"
        case .resumed: "resumed"
        case .terminated(let reason): "terminated (\(reason))"
        case .scheduledTaskStarted(let identifier): "scheduled task \(identifier) started"
        case .scheduledTaskEnded(let identifier, let completed):
            "scheduled task \(identifier) \(completed ? "completed" : "ran out of time")"
        }
    }
}

/// Why the execution policy suspended an app.
public enum SuspensionCause: String, Sendable, Hashable, Codable, CustomStringConvertible {
    /// It entered the background with no background task and nothing keeping it alive.
    case nothingKeepsItAlive
    /// Its background time ran out (its tasks ended in their expiration handlers).
    case backgroundTimeExpired
    /// It ended its last background task with time left, and nothing else keeps it alive.
    case backgroundTasksEnded
    /// Audio stopped and its grace period passed.
    case audioStopped
    /// Location activity ended (or lost its "always" authorization) and its grace period passed.
    case locationStopped
    /// The host outside the app (`keepalive host`) froze it under its own copy of the rules.
    case frozenByHost
    /// A scheduled task's time ran out before the app completed it.
    case scheduledTaskExpired
    /// The time it was given for a location event it was woken for passed.
    case eventHandled

    /// The event in words, as traces print it.
    public var description: String {
        switch self {
        case .nothingKeepsItAlive: "entered the background with nothing keeping it alive"
        case .backgroundTimeExpired: "background time expired"
        case .backgroundTasksEnded: "background tasks ended"
        case .audioStopped: "audio stopped"
        case .locationStopped: "location activity stopped"
        case .frozenByHost: "the host froze it"
        case .scheduledTaskExpired: "its scheduled task ran out of time"
        case .eventHandled: "its time for a location event passed"
        }
    }
}

/// Why an app stopped running for good.
public enum TerminationReason: Sendable, Hashable, CustomStringConvertible {
    /// The embedding program asked (`terminate()`).
    case requested
    /// A background task was still open when the background time ran out; iOS kills such apps.
    case backgroundTaskNotEnded(name: String)
    /// It broke a rule the system enforces (a host's app that left its group), said in `what`.
    case misbehaved(String)

    /// The event in words, as traces print it.
    public var description: String {
        switch self {
        case .requested: "requested"
        case .misbehaved(let what): what
        case .backgroundTaskNotEnded(let name):
            "background task '\(name)' was not ended before its time ran out"
        }
    }
}
