/// Work an app asks the host to run later, as BGTaskScheduler's refresh and processing
/// requests: when it is due and its conditions hold, the app is resumed in the background
/// with a budget of its own.
public struct BackgroundTaskRequest: Sendable, Hashable {
    /// Refresh or processing, as BGTaskScheduler's two request classes.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// A short refresh (BGAppRefreshTask): the profile's refresh budget, 30 s.
        case refresh
        /// Longer processing (BGProcessingTask): while its conditions hold, up to the profile's cap.
        case processing
    }

    /// The task's identifier: one pending request per identifier.
    public var identifier: String
    /// Refresh or processing.
    public var kind: Kind
    /// Not before this time (the model's clock); `nil`: as soon as the conditions hold.
    public var earliestBeginDate: Duration?
    /// Processing only: run only on external power.
    public var requiresExternalPower: Bool
    /// Processing only: run only with a network connection.
    public var requiresNetworkConnectivity: Bool

    /// A request, due as soon as its conditions hold unless `earliestBeginDate` says later.
    public init(
        identifier: String,
        kind: Kind = .refresh,
        earliestBeginDate: Duration? = nil,
        requiresExternalPower: Bool = false,
        requiresNetworkConnectivity: Bool = false
    ) {
        self.identifier = identifier
        self.kind = kind
        self.earliestBeginDate = earliestBeginDate
        self.requiresExternalPower = requiresExternalPower
        self.requiresNetworkConnectivity = requiresNetworkConnectivity
    }

    /// Whether the request may run under `conditions`.
    public func canRun(under conditions: SystemConditions) -> Bool {
        (!requiresExternalPower || conditions.hasExternalPower)
            && (!requiresNetworkConnectivity || conditions.hasNetwork)
    }
}

/// What scheduled work depends on: external power and a network connection.
public struct SystemConditions: Sendable, Hashable {
    /// A mains or USB supply is online, or there is no battery at all.
    public var hasExternalPower: Bool
    /// A default route exists.
    public var hasNetwork: Bool

    /// Conditions, both met by default.
    public init(hasExternalPower: Bool = true, hasNetwork: Bool = true) {
        self.hasExternalPower = hasExternalPower
        self.hasNetwork = hasNetwork
    }
}

/// One run of a scheduled request, handed to the app's handler: end it with
/// ``setTaskCompleted(success:)`` before its time runs out; ``expirationHandler`` is called
/// shortly before that.
public final class ScheduledBackgroundTask {
    /// The request's identifier.
    public let identifier: String
    /// Refresh or processing.
    public let kind: BackgroundTaskRequest.Kind
    /// Called before the task's time runs out (or, for processing, when its conditions stop holding).
    public var expirationHandler: (() -> Void)?
    weak var app: Application?
    let number: Int

    init(identifier: String, kind: BackgroundTaskRequest.Kind, app: Application, number: Int) {
        self.identifier = identifier
        self.kind = kind
        self.app = app
        self.number = number
    }

    /// Ends the task; the app is suspended again when nothing else keeps it running.
    public func setTaskCompleted(success: Bool) {
        app?.scheduledTaskCompleted(self, success: success)
    }
}
