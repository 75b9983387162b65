/// A way of keeping an app alive in the background, written as app code on an ``Application``.
public protocol KeepAliveStrategy: AnyObject {
    /// Reacts to the app's lifecycle.
    func handle(_ event: AppEvent)
}

/// The strategies the simulator compares.
public enum KeepAliveStrategyKind: String, Sendable, Hashable, CaseIterable, Codable, CustomStringConvertible {
    /// Nothing: suspended as soon as it leaves the foreground.
    case none
    /// One background task, ended in its expiration handler.
    case backgroundTask = "background-task"
    /// A background task renewed (ended and begun again) up to 5 times when under 10 s remain.
    case renewal
    /// A background task, then silent audio playing continuously.
    case audioLoop = "audio-loop"
    /// A background task, then continuous location updates.
    case continuousLocation = "continuous-location"
    /// A background task, then every 10 s a location poll (always) or 0.2 s of silence (otherwise).
    case hybrid
    /// Suspended in the background, woken by a scheduled refresh task every interval for one
    /// fix (needs the fetch mode).
    case scheduledRefresh = "scheduled-refresh"
    /// Keeps nothing alive: suspended in the background (frozen under the host) and woken for
    /// its location events (regions, significant changes, visits) by a monitor outside it,
    /// the host's or the service's own, for the profile's event budget each time.
    case monitoring

    /// The strategy's name on the command line.
    public var description: String { rawValue }

    /// Makes the strategy and attaches it to the context's application.
    public func make(_ context: KeepAliveContext) -> any KeepAliveStrategy {
        make(context, hybridOptions: .init())
    }

    /// Makes the strategy, with the hybrid driver's options.
    public func make(
        _ context: KeepAliveContext,
        hybridOptions: HybridKeepAliveMachine.Options,
        isLowPower: @escaping () -> Bool = { false }
    ) -> any KeepAliveStrategy {
        let strategy: any KeepAliveStrategy =
            switch self {
            case .none, .monitoring: NoKeepAlive()
            case .backgroundTask: BackgroundTaskKeepAlive(context)
            case .renewal: RenewalKeepAlive(context)
            case .audioLoop: TaskThenAssertionKeepAlive.audioLoop(context)
            case .continuousLocation: TaskThenAssertionKeepAlive.continuousLocation(context)
            case .hybrid: HybridKeepAlive(context, options: hybridOptions, isLowPower: isLowPower)
            case .scheduledRefresh: ScheduledRefreshKeepAlive(context, interval: hybridOptions.interval)
            }
        context.app.addObserver { [strategy] event in strategy.handle(event) }
        return strategy
    }
}

/// Does nothing.
final class NoKeepAlive: KeepAliveStrategy {
    func handle(_ event: AppEvent) {}
}
