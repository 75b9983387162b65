public import FoundationEssentials
public import Logging

/// Continuous and one-shot location over one source (gpsd or a replay), shared by every consumer.
///
/// The first consumer starts the source's session (one gpsd watch); the last one to leave
/// stops it. One-shot requests share a running watch instead of opening a second connection.
///
/// ```swift
/// let manager = LocationManager(source: GPSDSource())
/// for try await update in manager.updates(LocationFilter(desiredAccuracy: 20)) {
///     if case .location(let fix) = update { print(fix.latitude, fix.longitude) }
/// }
/// let here = try await manager.requestLocation(desiredAccuracy: 50, timeout: .seconds(10))
/// ```
public final class LocationManager: Sendable {
    let source: any LocationSource
    /// The app's authorization, enforced on every fix; `nil` delivers everything (a plain tool).
    public let authorization: LocationAuthorizationManager?
    let time: TimeSource
    let wallClock: @Sendable () -> Date
    let logger: Logger
    let state = Locked(State())
    /// The CoreLocation-shaped facade's own state (see `LocationManager+Delegate.swift`).
    let facade = Locked(Facade())

    /// A manager of `source`'s fixes; nothing is opened until the first request.
    ///
    /// - Parameters:
    ///   - source: where fixes come from: gpsd, a replay, or a test's script.
    ///   - clock: times one-shot timeouts.
    ///   - logger: where authorization pauses and session changes are logged.
    ///   - wallClock: the current date, for ``LocationFilter/maximumAge`` and cached-fix age when
    ///     the source has no clock of its own (``LocationSource/currentDate``; a replay has one).
    ///   - authorization: enforces the app's authorization: see ``LocationAccess``.
    ///   - receiverPower: switches the receiver on while a session needs it and off as soon as
    ///     none does (`nil`: the receiver is left as gpsd leaves it). See "The receiver's power".
    public init(
        source: any LocationSource,
        authorization: LocationAuthorizationManager? = nil,
        clock: some Clock<Duration> = DispatchClock(),
        wallClock: @escaping @Sendable () -> Date = { Date() },
        logger: Logger = Logger(label: "LocationKeepAlive.location"),
        receiverPower: ReceiverPowerSwitch? = nil
    ) {
        self.source = source
        self.authorization = authorization
        self.time = TimeSource(clock)
        self.wallClock = wallClock
        self.logger = logger
        self.receiverPower = receiverPower
        state.withLock { $0.power = receiverPower }
    }

    /// The receiver's power switch, if it has one.
    public let receiverPower: ReceiverPowerSwitch?

    deinit {
        let consumers = state.withLock { state in
            state.session?.cancel()
            state.authorizationWatcher?.cancel()
            defer { state.streams = [:] }
            return Array(state.streams.values)
        }
        // Only the facade's stream can outlive its manager (it holds the manager weakly): it ends
        // here, with the delegate's task, rather than wait for ever.
        consumers.forEach { $0.sink.finish(nil) }
    }

    /// The last fix received while the fix lasts; `nil` once the receiver reports it lost.
    public var location: Location? { state.withLock { $0.cachedLocation } }

    /// Whether its source rests while nobody watches it (gpsd: yes; a replay or a script: no;
    /// see ``LocationSource/restsWhenUnwatched``).
    public var sourceRestsWhenUnwatched: Bool { source.restsWhenUnwatched }

    /// Streams the fixes that pass `filter`, and status events, until the consumer stops.
    ///
    /// The stream throws if the source cannot start (gpsd unreachable at the first attempt,
    /// or invalid options), and finishes when a replay ends. It keeps the manager alive until it
    /// ends or its consumer drops it, so `LocationManager(source: source).updates()` is enough.
    public func updates(_ filter: LocationFilter = LocationFilter()) -> AsyncThrowingStream<LocationUpdate, any Error> {
        updates(filter, holdingTheManager: true)
    }

    /// ``updates(_:)``, holding the manager or not: the delegate facade's stream does not (a
    /// manager dropped by its app stops updating, as a `CLLocationManager` does), and ends when
    /// the manager goes.
    func updates(_ filter: LocationFilter, holdingTheManager: Bool) -> AsyncThrowingStream<LocationUpdate, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: LocationUpdate.self)
        do {
            try filter.validate()
            if case .denied(let error) = refreshAccess() { throw error }
        } catch {
            continuation.finish(throwing: error)
            return stream
        }
        let id = state.withLock { state in
            let id = state.nextID()
            state.streams[id] = StreamConsumer(filter: LocationFilterState(filter: filter), sink: .stream(continuation))
            return id
        }
        if holdingTheManager {
            // The stream holds its manager (whose session holds it only weakly) until the stream
            // ends or is dropped; the manager then lets go of the continuation, and of this.
            continuation.onTermination = { _ in self.removeConsumer(id) }
        } else {
            continuation.onTermination = { [weak self] _ in self?.removeConsumer(id) }
        }
        startSessionIfNeeded()
        return stream
    }

    /// Calls `handler` with the fixes that pass `filter`, and status events, until the calling
    /// task is cancelled (then it returns) or the source ends (a replay: returns; a source that
    /// cannot start: throws).
    ///
    /// The handler runs on the source's own thread, one call at a time, with no hop per fix: the
    /// cheapest way to consume a stream. It must return quickly and must not block.
    public func updates(
        _ filter: LocationFilter = LocationFilter(),
        handler: @escaping @Sendable (LocationUpdate) -> Void
    ) async throws {
        try filter.validate()
        if case .denied(let error) = refreshAccess() { throw error }
        let id = state.withLock { $0.nextID() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
                let sink = UpdateSink.handler(handler, done: done)
                let added = state.withLock { state in
                    guard !Task.isCancelled else { return false }
                    state.streams[id] = StreamConsumer(filter: LocationFilterState(filter: filter), sink: sink)
                    return true
                }
                if added { startSessionIfNeeded() } else { sink.finish(nil) }
            }
        } onCancel: {
            let consumer = state.withLock { state in
                defer { state.stopSessionIfIdle() }
                return state.streams.removeValue(forKey: id)
            }
            consumer?.sink.finish(nil)
        }
    }

    /// One fix: the first that meets `desiredAccuracy` (metres) and is younger than `maximumAge`.
    ///
    /// A cached fix that meets both returns at once (only when `maximumAge` is given). A coarse
    /// request (``coarseAccuracy`` or more) is answered from ``lastFix()`` when, grown, it meets
    /// both, and powers no receiver. At the timeout it throws
    /// ``LocationError/Code/locationUnknown`` carrying the best fix seen.
    public func requestLocation(
        desiredAccuracy: Double? = nil,
        maximumAge: Duration? = nil,
        timeout: Duration
    ) async throws -> Location {
        let filter = LocationFilter(desiredAccuracy: desiredAccuracy, maximumAge: maximumAge, rejectsDuplicates: false)
        try filter.validate()
        switch refreshAccess() {
        case .denied(let error): throw error
        case .paused(let reason): throw LocationError(.notAuthorized, reason)
        case .deliver: break
        }
        guard timeout > .zero else {
            throw LocationError.invalidOptions("timeout must be positive, not \(timeout.secondsText)")
        }
        // A coarse request (a kilometre or more) is answered from the last fix, grown, when it
        // is good enough: the receiver is never powered for it.
        if let coarse = coarseAnswer(filter) { return coarse }
        let now = currentDate()
        // The cached fix is taken under the lock that judged it: a report between two locks could
        // take it away.
        enum Answer { case cached(Location), waiting(id: Int) }
        let answer: Answer = state.withLock { state in
            if maximumAge != nil, let cached = state.cachedLocation, filter.accepts(cached, now: { now }) {
                return .cached(cached)
            }
            let id = state.nextID()
            state.oneShots[id] = OneShot(filter: filter)
            return .waiting(id: id)
        }
        let id: Int
        switch answer {
        case .cached(let location): return location
        case .waiting(let waiting): id = waiting
        }
        let deadline = time.now() + timeout
        startSessionIfNeeded()
        return try await withTaskCancellationHandler {
            try await withThrowingTaskGroup(of: Location?.self) { group in
                group.addTask { [time] in
                    try? await time.sleepUntil(deadline)
                    if !Task.isCancelled { self.expireOneShot(id, after: timeout) }
                    return nil
                }
                group.addTask { try await self.waitForOneShot(id) }
                defer { group.cancelAll() }
                while let result = try await group.next() {
                    if let location = result { return location }
                }
                throw CancellationError()
            }
        } onCancel: {
            self.finishOneShot(id, with: .failure(CancellationError()))
        }
    }

    // MARK: - The shared session

    func startSessionIfNeeded() {
        state.withLock { state in
            guard state.session == nil else { return }
            let generation = state.nextID()
            state.sessionGeneration = generation
            watchAuthorization(&state)
            state.power?.demand(true)
            state.session = Task { [weak self, source] in
                do {
                    // Events are dispatched on the source's thread: no hop per fix.
                    try await source.run { [weak self] event in self?.dispatch(event) }
                    self?.endSession(generation, error: nil)
                } catch {
                    self?.endSession(generation, error: error)
                }
            }
        }
    }

    /// Follows the authorization's changes, from the first session or delegate on.
    func watchAuthorization() {
        state.withLock { watchAuthorization(&$0) }
    }

    private func watchAuthorization(_ state: inout State) {
        // Subscribed now, not in the task: no change between here and its first turn is missed.
        // Kept for the manager's life once started: a service polling every 10 s in the
        // background would otherwise set up inotify and a thread for each poll.
        guard state.authorizationWatcher == nil else { return }
        state.authorizationWatcher = authorization.map { authorization in
            let changes = authorization.changes()
            return Task { [weak self] in
                for await snapshot in changes { self?.authorizationDidChange(snapshot) }
            }
        }
    }

    /// The date fix ages are measured against: the source's clock, else the wall clock.
    func currentDate() -> Date { source.currentDate ?? wallClock() }

    /// The clock of ``currentDate()``, in words (for a one-shot's failure).
    private var agesClock: String { source.currentDate == nil ? "the wall clock" : "the source's clock" }

    private func dispatch(_ event: SourceEvent) {
        // Read once per event, and only if a filter has an age limit (a replay's clock locks).
        var date: Date?
        let now = {
            if let date { return date }
            let current = self.currentDate()
            date = current
            return current
        }
        var deliveries: [(UpdateSink, LocationUpdate)] = []
        defer {
            // Outside the lock: a handler may call the manager.
            for (sink, update) in deliveries { sink.deliver(update) }
        }
        state.withLock { state in
            var event = event
            if case .report(var report) = event, let location = report.location {
                switch state.access {
                case .deliver(reduced: true):
                    report.location = location.reduced()
                    event = .report(report)
                case .deliver(reduced: false): break
                case .paused, .denied:
                    state.cachedLocation = location
                    return  // held back; the pause was announced when it began
                }
            }
            if case .report(let report) = event {
                if let location = report.location {
                    state.cachedLocation = location
                    state.lastFix = location
                    if let power = state.power {
                        let age = location.timestamp.map { Duration.seconds(max(0, now().timeIntervalSince($0))) }
                        power.fixArrived(age: age)
                    }
                } else if !report.mode.hasPosition {
                    state.cachedLocation = nil  // never hand out a fix after it was lost
                }
            }
            for index in state.streams.values.indices {  // in place: no copy of the table per fix
                let sink = state.streams.values[index].sink
                state.streams.values[index].filter.consider(event, now: now) { deliveries.append((sink, $0)) }
            }
            guard case .report(let report) = event, let location = report.location else { return }
            // Each waiter resumed once the session's end is decided (and the receiver's power
            // with it): a caller that goes on to wait for the power-down finds it asked.
            var answered: [CheckedContinuation<Location, any Error>] = []
            for (id, var oneShot) in state.oneShots where oneShot.result == nil {
                oneShot.noteCandidate(location, now: now)
                if oneShot.filter.accepts(location, now: now) {
                    oneShot.result = .success(location)
                    if let continuation = oneShot.continuation { answered.append(continuation) }
                    state.oneShots[id] = oneShot.continuation == nil ? oneShot : nil
                } else {
                    state.oneShots[id] = oneShot
                }
            }
            state.stopSessionIfIdle()
            answered.forEach { $0.resume(returning: location) }
        }
    }

    /// The source ended: a replay finished, or it could not start. Every consumer hears of it.
    private func endSession(_ generation: Int, error: (any Error)?) {
        // Finish outside the lock: finishing a stream runs its onTermination, which locks.
        let ended: [StreamConsumer]? = state.withLock { state in
            guard state.sessionGeneration == generation else { return nil }
            state.session = nil
            state.power?.demand(false)
            let consumers = Array(state.streams.values)
            state.streams.removeAll()
            // A request after a replay's end sees nothing new: name the last fix it did give.
            let last = state.cachedLocation.map { fix in
                "; the last fix it gave\(fix.timestamp.map { " (\($0.formatted(.iso8601)))" } ?? "") is the manager's `location`"
            }
            for (id, var oneShot) in state.oneShots where oneShot.result == nil {
                let failure =
                    error
                    ?? LocationError.locationUnknown(
                        "the source ended before a fix met the request" + (oneShot.best == nil ? last ?? "" : ""),
                        best: oneShot.best,
                        rejectedBecause: oneShot.bestRejection(agesMeasuredBy: agesClock)
                    )
                oneShot.complete(.failure(failure))
                state.oneShots[id] = oneShot.continuation == nil ? oneShot : nil
            }
            return consumers
        }
        for consumer in ended ?? [] { consumer.sink.finish(error) }
    }

    private func removeConsumer(_ id: Int) {
        state.withLock { state in
            state.streams[id] = nil
            state.stopSessionIfIdle()
        }
    }

    private func waitForOneShot(_ id: Int) async throws -> Location {
        try await withCheckedThrowingContinuation { continuation in
            state.withLock { state in
                guard var oneShot = state.oneShots[id] else {
                    return continuation.resume(throwing: CancellationError())
                }
                if let result = oneShot.result {
                    state.oneShots[id] = nil
                    state.stopSessionIfIdle()
                    return continuation.resume(with: result)
                }
                oneShot.continuation = continuation
                state.oneShots[id] = oneShot
            }
        }
    }

    private func expireOneShot(_ id: Int, after timeout: Duration) {
        let clock = agesClock
        let (best, rejection) = state.withLock { state in
            (state.oneShots[id]?.best, state.oneShots[id]?.bestRejection(agesMeasuredBy: clock))
        }
        let error = LocationError.locationUnknown(
            "no fix met the request within \(timeout.secondsText)",
            best: best,
            rejectedBecause: rejection
        )
        finishOneShot(id, with: .failure(error))
    }

    private func finishOneShot(_ id: Int, with result: Result<Location, any Error>) {
        state.withLock { state in
            guard var oneShot = state.oneShots[id], oneShot.result == nil else { return }
            oneShot.complete(result)
            if oneShot.continuation == nil {
                state.oneShots[id] = oneShot
            } else {
                state.oneShots[id] = nil
                state.stopSessionIfIdle()
            }
        }
    }
}

extension LocationManager {
    struct StreamConsumer {
        var filter: LocationFilterState
        let sink: UpdateSink
    }

    struct OneShot {
        let filter: LocationFilter
        var best: Location?
        /// The date on the ages' clock when ``best`` was seen (`nil` without an age limit).
        var bestSeenAt: Date?
        var result: Result<Location, any Error>?
        var continuation: CheckedContinuation<Location, any Error>?

        /// Keeps the most accurate fix seen, and when it was seen if its age matters.
        mutating func noteCandidate(_ location: Location, now: () -> Date) {
            if let best, (location.horizontalAccuracy ?? .infinity) > (best.horizontalAccuracy ?? .infinity) { return }
            best = location
            bestSeenAt = filter.maximumAge == nil ? nil : now()
        }

        /// The rule that turned ``best`` down when it was seen, in words: built only for the error.
        func bestRejection(agesMeasuredBy clock: String) -> String? {
            best.flatMap { filter.rejection(of: $0, now: bestSeenAt ?? .distantPast, clock: clock) }
        }

        /// Records the result and resumes the waiter, if one is waiting yet.
        mutating func complete(_ result: Result<Location, any Error>) {
            self.result = result
            continuation?.resume(with: result)
        }
    }

    struct State {
        var streams: [Int: StreamConsumer] = [:]
        var oneShots: [Int: OneShot] = [:]
        var session: Task<Void, Never>?
        var authorizationWatcher: Task<Void, Never>?
        var sessionGeneration = 0
        var appState: AppState = .active
        var backgroundSessions = 0
        var access: LocationAccess = .deliver(reduced: false)
        var cachedLocation: Location?
        /// The last fix received, kept through a loss and a suspension: coarse answers grow from it.
        var lastFix: Location?
        var power: ReceiverPowerSwitch?
        var restartsAfterSuspension = 0
        private var lastID = 0

        mutating func nextID() -> Int {
            lastID += 1
            return lastID
        }

        mutating func stopSessionIfIdle() {
            guard streams.isEmpty, oneShots.values.allSatisfy({ $0.result != nil }) else { return }
            if session != nil { power?.demand(false) }
            session?.cancel()
            session = nil
        }
    }
}

