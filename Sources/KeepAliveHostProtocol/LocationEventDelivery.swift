/// What a host did for an app's location event (as `AppHost.Event.locationEvent` says), and what a simulation shows.
public enum LocationEventDelivery: String, Sendable, Hashable, CustomStringConvertible {
    /// The app was running: told at once.
    case told
    /// The app was suspended (frozen) or about to be: thawed, told, and given the event budget.
    case woken
    /// The app was not running: launched for it, told after its hello.
    case launched
    /// The app was suspended or not running and its wake budget is spent: told at the next
    /// wake the budget allows (see ``WakeBudget``).
    case deferred

    /// `told`, `woken`, `launched`, `deferred`.
    public var description: String { rawValue }
}
