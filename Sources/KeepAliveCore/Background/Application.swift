public import Logging

/// An application's life under a host that suspends background apps: the model that lets a
/// keep-alive strategy be built, tested and proven on Linux, where nothing suspends a process.
///
/// It holds the app state, background tasks sharing one budget per background entry, the app's
/// timers, and the assertions that keep a background app running (audio playing, location with
/// "always"). Time is a `Duration` since start; a driver advances it: ``run(for:)`` in virtual
/// time (24 hours in milliseconds), or ``ApplicationRunLoop`` on a real clock.
///
/// - Important: Not thread-safe: confine an application to one task or actor. Callbacks
///   (timers, expiration handlers, observers) run synchronously inside ``advance(to:)`` and
///   the lifecycle calls.
public final class Application {
    /// The system it behaves like (background budget, renewal).
    public let profile: ExecutionProfile
    /// The background modes it declared.
    public let backgroundModes: BackgroundModes
    /// Where its lifecycle is logged.
    public let logger: Logger

    /// The current time, since the application model was created.
    public internal(set) var now: Duration = .zero
    /// Where the application is in its lifecycle.
    public internal(set) var state: AppState = .notRunning {
        didSet { accountTime(leaving: oldValue) }
    }
    /// The location authorization the policy reads; a change takes effect at once.
    public var authorization: LocationAuthorization {
        didSet {
            guard authorization != oldValue else { return }
            logger.info("authorization changed", metadata: ["from": "\(oldValue)", "to": "\(authorization)"])
            if oldValue == .always, locationActivityCount > 0, backgroundModes.contains(.location) {
                // Location stops counting: the same grace as a request that ends.
                locationGraceUntil = now + profile.locationGrace
                lastKeptAliveBy = .locationStopped
                schedulePolicyCheck(at: locationGraceUntil)
            }
            schedulePolicyCheck()
        }
    }
    /// Time in each state, suspensions, wake-ups and the work that kept it alive so far.
    public internal(set) var statistics = ExecutionStatistics()

    // Background tasks and the budget of the current background entry.
    package var tasks: [BackgroundTaskIdentifier: BackgroundTask] = [:]
    var lastTaskNumber = 0
    var taskNumberAtEntry = 0
    var budgetDeadline: Duration?
    var budgetGeneration = 0
    var expirationWarned = false

    // Assertions.
    package var audioPlaybackCount = 0
    package var locationActivityCount = 0
    package var audioGraceUntil: Duration = .zero
    package var locationGraceUntil: Duration = .zero
    var lastKeptAliveBy: SuspensionCause?
    package var entryGraceUntil: Duration = .zero
    package var eventGraceUntil: Duration = .zero

    // Scheduled background work.
    var scheduledRequests: [String: BackgroundTaskRequest] = [:]
    var scheduledHandlers: [String: (ScheduledBackgroundTask) -> Void] = [:]
    var scheduledTask:
        (task: ScheduledBackgroundTask, request: BackgroundTaskRequest?, deadline: Duration, warned: Bool)?
    var currentConditions = SystemConditions()
    /// Submitted requests are run when ``runScheduledTask(identifier:)`` says, not by this
    /// model's clock: a hosted app, whose host decides (reported through ``onActivity``).
    public var schedulesRequestsElsewhere = false
    /// Runs scheduled tasks that have no handler of their own (a host serving other processes).
    public var defaultScheduledHandler: ((ScheduledBackgroundTask) -> Void)?
    var handlerUntil: Duration = .zero

    // Timers and scheduled work.
    var queue = EventQueue<Scheduled>()
    var timers: [Int: AppTimer] = [:]
    var lastTimerID = 0
    var systemWork: [Int: () -> Void] = [:]
    var policyCheckQueued = false
    var stateSince: Duration = .zero

    /// Called with every background task begun or ended and every start and stop of audio or
    /// location activity, synchronously (a hosted app reports them to its host).
    public var onActivity: ((ApplicationActivity) -> Void)?

    /// Lifecycle callbacks named like UIApplicationDelegate's; held weakly.
    public weak var delegate: (any ApplicationDelegate)?

    // Observation.
    var observers: [Int: (AppEvent) -> Void] = [:]
    var lastObserverID = 0
    var eventContinuations: [AsyncStream<AppEvent>.Continuation] = []

    /// A new, not running application.
    public init(
        profile: ExecutionProfile = .unlimited,
        backgroundModes: BackgroundModes = [],
        authorization: LocationAuthorization = .notDetermined,
        logger: Logger = Logger(label: "LocationKeepAlive.application")
    ) {
        self.profile = profile
        self.backgroundModes = backgroundModes
        self.authorization = authorization
        self.logger = logger
    }

    // MARK: Lifecycle, driven by the embedding program

    /// Not running to active: `didFinishLaunching`, `didBecomeActive`.
    public func launch() {
        guard state == .notRunning else { return logger.debug("launch ignored", metadata: ["state": "\(state)"]) }
        state = .inactive
        emit(.didFinishLaunching)
        state = .active
        emit(.didBecomeActive)
    }

    /// Not running to background, never active, as a system launches an app for a location
    /// event or a daemon starts: `didFinishLaunching`, `didEnterBackground`; the budget starts.
    /// Nothing that opens in the foreground (a watch, a prompt) opens for a moment between.
    public func launchInBackground() {
        guard state == .notRunning else { return logger.debug("launch ignored", metadata: ["state": "\(state)"]) }
        state = .inactive
        emit(.didFinishLaunching)
        enterBackground()
    }

    /// Active to background: `willResignActive`, `didEnterBackground`; the budget starts.
    public func enterBackground() {
        guard state == .active || state == .inactive else {
            return logger.debug("enter background ignored", metadata: ["state": "\(state)"])
        }
        if state == .active {
            state = .inactive
            emit(.willResignActive)
        }
        statistics.backgroundEntries += 1
        if statistics.firstBackgroundEntry == nil { statistics.firstBackgroundEntry = now }
        startBudget()
        lastKeptAliveBy = nil
        entryGraceUntil = now + profile.backgroundEntryGrace
        if entryGraceUntil > now { schedulePolicyCheck(at: entryGraceUntil) }
        taskNumberAtEntry = lastTaskNumber
        state = .background
        emit(.didEnterBackground)
        schedulePolicyCheck()
        // Work that fell due in the foreground runs now (a host may launch an app for it).
        if !scheduledRequests.isEmpty, !schedulesRequestsElsewhere { queue.insert(.scheduledCheck, at: now) }
    }

    /// Active to background while the app's own `didEnterBackground` handler runs elsewhere (a
    /// hosted app, in its own process): the app is not suspended until
    /// ``backgroundHandlerFinished()`` or until `limit` passes, as iOS lets that handler run.
    public func enterBackground(awaitingHandlerFor limit: Duration) {
        enterBackground()
        guard state == .background else { return }
        handlerUntil = now + limit
        schedulePolicyCheck(at: handlerUntil)
    }

    /// The app's `didEnterBackground` handler returned (or its time ran out).
    public func backgroundHandlerFinished() {
        guard handlerUntil > now else { return }
        handlerUntil = now
        schedulePolicyCheck()
    }

    /// Background (or suspended) to active: `resumed`, `willEnterForeground`, `didBecomeActive`.
    public func enterForeground() {
        guard state == .background || state == .suspended else {
            return logger.debug("enter foreground ignored", metadata: ["state": "\(state)"])
        }
        if state == .suspended { resume() }
        stopBudget()
        state = .inactive
        emit(.willEnterForeground)
        state = .active
        emit(.didBecomeActive)
    }

    /// Ends the app: `willTerminate`, then not running.
    public func terminate() {
        guard state != .notRunning else { return }
        emit(.willTerminate)
        shutDown()
    }

    /// Kills the app for `reason`, as the system kills one that broke its rules: not running,
    /// then `terminated(reason)` (no `willTerminate`: it is not asked).
    public func kill(because reason: TerminationReason) {
        guard state != .notRunning else { return }
        logger.warning("terminated", metadata: ["reason": "\(reason)"])
        statistics.termination = (now, reason)
        shutDown()
        emit(.terminated(reason))
    }

    // MARK: Observation

    /// Calls `observer` with every event, synchronously.
    @discardableResult
    public func addObserver(_ observer: @escaping (AppEvent) -> Void) -> Int {
        lastObserverID += 1
        observers[lastObserverID] = observer
        return lastObserverID
    }

    /// Stops calling the observer that ``addObserver(_:)`` numbered `id`.
    public func removeObserver(_ id: Int) { observers[id] = nil }

    /// Every event from now on.
    public var events: AsyncStream<AppEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: AppEvent.self)
        eventContinuations.append(continuation)
        return stream
    }

    func emit(_ event: AppEvent) {
        logger.debug("app event", metadata: ["event": "\(event)", "time": "\(now)"])
        notifyDelegate(event)
        for observer in observers.sorted(by: { $0.key < $1.key }).map(\.value) { observer(event) }
        for continuation in eventContinuations { continuation.yield(event) }
    }

    // MARK: Running

    /// When the next scheduled thing happens, if anything is scheduled.
    public var nextEventTime: Duration? { queue.nextTime }

    /// Runs everything due up to `time`, in order, then sets the clock to `time`.
    public func advance(to time: Duration) {
        while let entry = queue.popDue(atOrBefore: time) {
            now = max(now, entry.time)
            handle(entry.payload)
        }
        now = max(now, time)
    }

    /// Advances virtual time by `duration`.
    public func run(for duration: Duration) { advance(to: now + duration) }

    /// Schedules host-side work (a device finishing, a fix arriving): runs even while suspended.
    package func scheduleSystemWork(after delay: Duration, _ work: @escaping () -> Void) {
        lastTimerID += 1
        systemWork[lastTimerID] = work
        queue.insert(.system(lastTimerID), at: now + max(.zero, delay))
    }

    private func handle(_ scheduled: Scheduled) {
        switch scheduled {
        case .policyCheck:
            policyCheckQueued = false
            evaluatePolicy()
        case .expirationWarning(let generation):
            guard generation == budgetGeneration else { return }
            warnExpiringTasks()
        case .budgetEnd(let generation):
            guard generation == budgetGeneration else { return }
            budgetEnded()
        case .timer(let id, let generation):
            fireTimer(id, generation: generation)
        case .system(let id):
            systemWork.removeValue(forKey: id)?()
        case .scheduledCheck:
            runDueScheduledTask()
        case .scheduledWarning(let number):
            expireScheduledTask(number)
        case .scheduledEnd(let number):
            endScheduledTask(number)
        }
    }

    func shutDown() {
        state = .notRunning
        tasks.removeAll()
        timers.removeAll()
        audioPlaybackCount = 0
        locationActivityCount = 0
        scheduledTask = nil
        stopBudget()
    }

    private func accountTime(leaving oldState: AppState) {
        let spent = now - stateSince
        switch oldState {
        case .background: statistics.backgroundRunningTime += spent
        case .suspended: statistics.suspendedTime += spent
        default: break
        }
        stateSince = now
    }

    /// Closes the books at the current time (call before reading ``statistics`` at the end of a run).
    public func finishAccounting() { accountTime(leaving: state) }
}

/// Work waiting in the application's queue.
enum Scheduled {
    case policyCheck
    case expirationWarning(generation: Int)
    case budgetEnd(generation: Int)
    case timer(id: Int, generation: Int)
    case system(Int)
    case scheduledCheck
    case scheduledWarning(Int)
    case scheduledEnd(Int)
}
