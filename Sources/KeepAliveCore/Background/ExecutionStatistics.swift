/// What happened to an application over a run, in time since it started.
public struct ExecutionStatistics: Sendable, Hashable {
    /// One suspension.
    public struct Suspension: Sendable, Hashable {
        /// Time since the application started.
        public var at: Duration
        /// Why it was suspended.
        public var cause: SuspensionCause

        /// A suspension at `at`, for `cause`.
        public init(at: Duration, cause: SuspensionCause) {
            self.at = at
            self.cause = cause
        }
    }

    /// When it first entered the background.
    public var firstBackgroundEntry: Duration?
    /// How many times it entered the background.
    public var backgroundEntries = 0
    /// Time spent in the background with its code running.
    public var backgroundRunningTime: Duration = .zero
    /// Time spent suspended.
    public var suspendedTime: Duration = .zero
    /// Every suspension, in order.
    public var suspensions: [Suspension] = []
    /// When and why it was killed, if it was (a requested termination is not listed).
    public var termination: (at: Duration, reason: TerminationReason)?
    /// Times its code ran in the background: timer fires and expiration handlers.
    public var wakeups = 0
    /// Background tasks begun, and expiration handlers called.
    public var backgroundTasksBegun = 0
    /// Expiration handlers called.
    public var expirationHandlersCalled = 0
    /// Scheduled requests submitted, and run.
    public var scheduledTasksSubmitted = 0
    /// Scheduled requests run.
    public var scheduledTasksRun = 0

    /// Equal when every count and time is.
    public static func == (lhs: ExecutionStatistics, rhs: ExecutionStatistics) -> Bool {
        lhs.firstBackgroundEntry == rhs.firstBackgroundEntry && lhs.backgroundEntries == rhs.backgroundEntries
            && lhs.backgroundRunningTime == rhs.backgroundRunningTime && lhs.suspendedTime == rhs.suspendedTime
            && lhs.suspensions == rhs.suspensions && lhs.termination?.at == rhs.termination?.at
            && lhs.termination?.reason == rhs.termination?.reason && lhs.wakeups == rhs.wakeups
            && lhs.scheduledTasksRun == rhs.scheduledTasksRun
    }

    /// Hashes every count and time.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(suspensions)
        hasher.combine(wakeups)
    }
}
