public import FoundationEssentials
public import KeepAliveCore
public import Logging

/// Watches fixes for regions, significant changes and visits: CoreLocation's `CLMonitor`.
///
/// Conditions are added and removed by identifier; each fix that changes one's state gives a
/// ``MonitorEvent`` on ``events`` (and from ``evaluate(_:)``). With a file, the conditions,
/// their states and last events survive a restart: a region the device is in stays satisfied,
/// with no second entry.
///
/// ```swift
/// let monitor = try LocationMonitor(named: "places", file: URL(fileURLWithPath: "places.json"))
/// try monitor.add(.circle(center: Coordinate(latitude: 52.37, longitude: 4.89), radius: 200), identifier: "home")
/// try monitor.add(.significantChange, identifier: "moves")
/// let events = monitor.events  // made before the watch starts: no event is missed
/// let monitoring = Task { try await monitor.monitor(LocationManager(source: GPSDSource())) }
/// for await event in events { print(event.identifier, event.state, event.date) }  // ends with the watch
/// try await monitoring.value  // why it ended, if it failed (gpsd unreachable at the start)
/// ```
public final class LocationMonitor: Sendable {
    /// The monitor's name.
    public let name: String
    /// Where it is saved; `nil` for one in memory.
    public let file: URL?
    /// The thresholds it decides by.
    public let rules: MonitoringRules
    private let time: TimeSource
    private let logger: Logger
    private let state: Locked<State>
    /// Held while the file is written, so that saves are written in the order their states were
    /// read; the state's own lock is held only to read and change it, never across a write, so
    /// that a fix evaluated while a save waits on a slow disk is not held up by it.
    private let saving = Locked(())

    private struct State: Sendable {
        var engine: MonitorEngine
        var records: [String: MonitorRecord] = [:]
        var subscribers: [Int: AsyncStream<MonitorEvent>.Continuation] = [:]
        var nextSubscriber = 0
        var isPaused = false
        /// How many ``monitor(_:pausing:handler:paused:forEachFix:)`` calls are running.
        var monitorings = 0
    }

    /// The most conditions a monitor takes, 100,000 (iOS allows 20 regions an app): each fix is
    /// tested against all of them, in well under a millisecond (see BENCHMARKS.md).
    public static let maximumConditions = 100_000

    /// A monitor named `name`, restored from `file` when it exists.
    ///
    /// - Parameters:
    ///   - file: where the conditions are kept; `nil` keeps them in memory only. A damaged
    ///     file throws ``MonitoringError/Code/damagedFile`` and is left as it is.
    ///   - rules: the thresholds for a new monitor; a restored one keeps those it was saved with.
    ///   - clock: times the checks of a ``StationaryPause``.
    public init(
        named name: String,
        file: URL? = nil,
        rules: MonitoringRules = MonitoringRules(),
        clock: some Clock<Duration> = DispatchClock(),
        logger: Logger = Logger(label: "LocationKeepAlive.monitor")
    ) throws(MonitoringError) {
        try rules.validate()
        var state = State(engine: MonitorEngine(rules: rules))
        var rulesInForce = rules
        if let file, let saved = try MonitorFile(url: file).load() {
            rulesInForce = saved.rules
            state.engine = MonitorEngine(rules: saved.rules)
            for entry in saved.entries {
                state.engine.add(
                    entry.record.condition,
                    identifier: entry.identifier,
                    state: entry.record.state,
                    significantChange: entry.significantChange ?? SignificantChangeTracker(),
                    visit: entry.visit ?? DwellDetector()
                )
                state.records[entry.identifier] = entry.record
            }
        }
        self.name = name
        self.file = file
        self.rules = rulesInForce
        self.time = TimeSource(clock)
        self.logger = logger
        self.state = Locked(state)
    }

    deinit {
        state.withLock { $0.subscribers.values.forEach { $0.finish() } }
    }

    /// The identifiers of the conditions, sorted.
    public var identifiers: [String] { state.read { $0.records.keys.sorted() } }

    /// The condition `identifier`, its state and last event.
    public func record(for identifier: String) -> MonitorRecord? { state.read { $0.records[identifier] } }

    /// Whether the device has kept within ``MonitoringRules/stationaryRadius`` for
    /// ``MonitoringRules/stationaryDwell`` (`CLLocationUpdate.isStationary`).
    public var isStationary: Bool { state.read { $0.engine.isStationary } }

    /// Whether ``monitor(_:pausing:handler:paused:forEachFix:)`` has left its watch for a ``StationaryPause``.
    public var isPaused: Bool { state.read { $0.isPaused } }

    /// The circles a fix lay inside of whose accuracy was wider than their radius: no fix that
    /// coarse can ever lie wholly inside one, so it stays undecided (as CLMonitor's unknown),
    /// said once each as a warning. Give such a region a radius of at least the fixes' accuracy.
    public var undecidableRegions: Set<String> { state.read { $0.engine.regions.undecidableRegions } }

    /// Metres travelled since the monitor was made, from the fixes that counted (not saved).
    public var distanceTravelled: Double { state.read { $0.engine.odometer.distance } }

    /// Adds `condition` as `identifier`, replacing one of that name, in state `assuming` (a
    /// region added as `.unsatisfied` gives no event until entered). Saved before it returns.
    public func add(_ condition: MonitorCondition, identifier: String, assuming: MonitorState = .unknown) throws(MonitoringError) {
        try add([identifier: condition], assuming: assuming)
    }

    /// Adds every condition (by identifier) at once, with one save: all or none.
    public func add(_ conditions: [String: MonitorCondition], assuming: MonitorState = .unknown) throws(MonitoringError) {
        for (identifier, condition) in conditions {
            guard !identifier.isEmpty else { throw .invalidCondition("a condition's identifier must not be empty") }
            do {
                try condition.validate()
            } catch {
                throw MonitoringError(error.code, "condition \"\(identifier)\": \(error.message)")
            }
        }
        try change { (state: inout State) throws(MonitoringError) in
            let added = conditions.keys.filter { state.records[$0] == nil }.count
            guard state.records.count + added <= Self.maximumConditions else {
                throw MonitoringError(
                    .tooManyConditions,
                    "monitor \(name) has \(state.records.count) conditions and may have at most \(Self.maximumConditions); "
                        + "\(added) more were refused. Remove some first"
                )
            }
            for (identifier, condition) in conditions.sorted(by: { $0.key < $1.key }) {
                state.engine.add(condition, identifier: identifier, state: assuming)
                state.records[identifier] = MonitorRecord(condition: condition, state: assuming)
            }
        }
    }

    /// Makes the monitor hold exactly `conditions`: a new or changed one is added
    /// in state `assuming`, one not named is removed, and one unchanged keeps its state and last
    /// event (a conditions file read again at every start tells no second entry). A circle
    /// renamed, the same otherwise, keeps its state too, and its events carry the new name.
    public func update(to conditions: [String: MonitorCondition], assuming: MonitorState = .unknown) throws(MonitoringError) {
        let added = conditions.filter { identifier, condition in
            record(for: identifier).map { !$0.condition.isSameWatch(as: condition) } ?? true
        }
        try add(added, assuming: assuming)
        let renamed = conditions.filter { added[$0.key] == nil && record(for: $0.key)?.condition != $0.value }
        if !renamed.isEmpty {
            for condition in renamed.values { try condition.validate() }
            try change { (state: inout State) throws(MonitoringError) in
                for (identifier, condition) in renamed { state.records[identifier]?.condition = condition }
            }
        }
        for identifier in Set(identifiers).subtracting(conditions.keys) { try remove(identifier) }
    }

    /// Removes the condition `identifier`; an unknown identifier is no error.
    public func remove(_ identifier: String) throws(MonitoringError) {
        try change { (state: inout State) throws(MonitoringError) in
            state.engine.remove(identifier)
            state.records[identifier] = nil
        }
    }

    /// The events from now on, in order. Each call is a stream of its own.
    ///
    /// The stream ends, after every event given before, when the monitoring it follows ends:
    /// when ``monitor(_:pausing:handler:paused:forEachFix:)`` returns or throws (a replay or a script
    /// came to its end, gpsd was unreachable at the start, its task was cancelled) and no other
    /// call of it is running. A stream made while nothing is monitoring follows the next call; one
    /// fed only by ``evaluate(_:)`` ends when the monitor is released. Make the stream before you
    /// start the monitoring: an event given before the stream exists is not on it.
    public var events: AsyncStream<MonitorEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: MonitorEvent.self)
        let id = state.withLock { state in
            defer { state.nextSubscriber += 1 }
            state.subscribers[state.nextSubscriber] = continuation
            return state.nextSubscriber
        }
        continuation.onTermination = { [weak self] _ in self?.state.withLock { _ = $0.subscribers.removeValue(forKey: id) } }
        return stream
    }

    /// Evaluates every condition against `location`: the events it gives, also sent on ``events``.
    @discardableResult
    public func evaluate(_ location: Location) -> [MonitorEvent] {
        evaluate(location, tellingFirst: { _ in })
    }

    /// Evaluates `location`, hands each event to `tell`, then saves them: an event `tell` has
    /// taken (journaled, say) before it is saved is told again after a crash, never lost.
    private func evaluate(_ location: Location, tellingFirst tell: (MonitorEvent) -> Void) -> [MonitorEvent] {
        let events = evaluateBeforeSaving(location)
        guard !events.isEmpty else { return events }
        events.forEach(tell)
        saveEvents()
        return events
    }

    /// ``evaluate(_:)`` without the save, for a caller that acts on the events first (the host
    /// wakes an app before the file's fsync) and then calls ``saveEvents()``.
    package func evaluateBeforeSaving(_ location: Location) -> [MonitorEvent] {
        let (events, subscribers, undecidable) = state.withLock { state in
            let events = state.engine.evaluate(location).map { event in
                var event = event
                event.condition = state.records[event.identifier]?.condition
                return event
            }
            let undecidable = state.engine.takeUndecidable()
            guard !events.isEmpty else { return (events, [AsyncStream<MonitorEvent>.Continuation](), undecidable) }
            for event in events { state.records[event.identifier]?.record(event) }
            return (events, Array(state.subscribers.values), undecidable)
        }
        for (identifier, radius, accuracy) in undecidable {
            let why = "no fix can lie wholly inside it, so it stays undecided; give it a radius of at least the accuracy, or ask for finer fixes"
            logger.warning(
                "monitor \(name): region \"\(identifier)\" (radius \(Int(radius.rounded())) m) is smaller than the fixes' accuracy (±\(Int(accuracy.rounded(.up))) m): \(why)"
            )
        }
        for event in events { subscribers.forEach { $0.yield(event) } }
        return events
    }

    /// Saves the states and last events to the file, if any; a failure is logged (the next
    /// event saves them again).
    package func saveEvents() {
        guard let file else { return }
        saving.withLock { _ in
            let entries = state.read(Self.entries(of:))
            do {
                try MonitorFile(url: file).save(name: name, rules: rules, entries: entries)
            } catch {
                logger.error("\(error.message); the events are delivered, and saved with the next one")
            }
        }
    }

    /// Evaluates the fixes of `manager` until the calling task is cancelled (then it returns) or
    /// the source ends (a replay: returns; gpsd unreachable at the start: throws). When it ends,
    /// so do the streams of ``events`` (unless another call of it is still running).
    ///
    /// With `pausing`, the watch is left while the device is stationary, and a fix is asked for
    /// every ``StationaryPause/checkInterval`` instead; `nil` watches all the time, as does a
    /// source that does not rest while unwatched (a replay, a test's script: see
    /// `LocationSource.restsWhenUnwatched`), so that on those this ends when the source ends.
    ///
    /// `handler` gets each event too, in order, as it is decided (a stream's consumer may be
    /// behind, and reads the rest after this returned). It gets them before the file is saved, so what it keeps durably (a journal) has every event at least once,
    /// a crash between the two telling it again at the next start. `paused` is told `true` as
    /// the watch is left for a stationary pause (a receiver whose power is switched goes off
    /// with it, until the next check) and `false` as the device moved and the watch resumes.
    /// `forEachFix` gets
    /// every fix the watch and the checks bring, before it is evaluated: the way for one watch
    /// to serve other monitors (the host's, one per app), paused when this one pauses.
    public func monitor(
        _ manager: LocationManager,
        pausing pause: StationaryPause? = StationaryPause(),
        handler: @escaping @Sendable (MonitorEvent) -> Void = { _ in },
        paused: @escaping @Sendable (Bool) -> Void = { _ in },
        forEachFix: @escaping @Sendable (Location) -> Void = { _ in }
    ) async throws {
        let handler = Feed(fixes: forEachFix, events: handler)
        let pause = manager.sourceRestsWhenUnwatched ? pause : nil
        state.withLock { $0.monitorings += 1 }
        defer { endMonitoring() }
        while !Task.isCancelled {
            guard try await watch(manager, untilStationary: pause != nil, handler: handler), let pause else { return }
            logger.info("monitor \(name): stationary, the watch is left; a fix every \(pause.checkInterval.secondsText)")
            state.withLock { $0.isPaused = true }
            paused(true)
            defer { state.withLock { $0.isPaused = false } }
            guard try await waitForMovement(manager, pause, handler: handler) else { return }
            logger.info("monitor \(name): moved, watching again")
            paused(false)
        }
    }

    /// One call of ``monitor(_:pausing:handler:paused:forEachFix:)`` ended: when it was the last one
    /// running, the streams of ``events`` end (each after the events it holds).
    private func endMonitoring() {
        let ended = state.withLock { state -> [AsyncStream<MonitorEvent>.Continuation] in
            state.monitorings -= 1
            guard state.monitorings == 0 else { return [] }
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        ended.forEach { $0.finish() }
    }

    /// Watches until the device is stationary (true) or the source ends or the task is
    /// cancelled (false).
    private func watch(
        _ manager: LocationManager,
        untilStationary: Bool,
        handler: Feed
    ) async throws -> Bool {
        let (stationary, signal) = AsyncStream.makeStream(of: Void.self)
        return try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try await manager.updates(LocationFilter()) { [weak self] update in
                    guard case .location(let fix) = update, let self else { return }
                    handler.fixes(fix)
                    _ = self.evaluate(fix, tellingFirst: handler.events)
                    if untilStationary, self.isStationary { signal.yield() }
                }
                return false
            }
            group.addTask {
                for await _ in stationary { return true }
                return false
            }
            defer { group.cancelAll() }
            return try await group.next() ?? false
        }
    }

    /// Asks for a fix every `pause.checkInterval` until one lies wholly beyond the stationary
    /// place (true), or the task is cancelled (false).
    private func waitForMovement(
        _ manager: LocationManager,
        _ pause: StationaryPause,
        handler: Feed
    ) async throws -> Bool {
        while true {
            do {
                try await time.sleep(pause.checkInterval)
            } catch {
                return false
            }
            let fix: Location
            do {
                fix = try await manager.requestLocation(desiredAccuracy: rules.maximumAccuracy, timeout: pause.timeout)
            } catch let error as LocationError where [.locationUnknown, .gpsdUnreachable, .connectionLost].contains(error.code) {
                logger.notice("monitor \(name): no fix for the stationary check (\(error.message)); again in \(pause.checkInterval.secondsText)")
                continue
            }
            handler.fixes(fix)
            _ = evaluate(fix, tellingFirst: handler.events)
            // Moved (or an outlier): stationary again only after a new stay, so a false alarm
            // costs one stationary dwell of watching.
            if state.withLock({ $0.engine.restartStationaryDetectionIfLeaving() }) { return true }
        }
    }

    /// Where ``monitor(_:pausing:handler:paused:forEachFix:)`` hands what it sees.
    private struct Feed: Sendable {
        let fixes: @Sendable (Location) -> Void
        let events: @Sendable (MonitorEvent) -> Void
    }

    /// Runs `body` on the state and saves it; if the save fails, the state is as before. `body`
    /// throws, if at all, before it changes anything.
    ///
    /// The file is written outside the state's lock (a fix evaluated meanwhile is not held up by
    /// the write), and `body` is then applied to the state as it is by then: events evaluated
    /// meanwhile are kept, and saved by their own ``saveEvents()``, which waits for this write.
    private func change(_ body: (inout State) throws(MonitoringError) -> Void) throws(MonitoringError) {
        // In memory nothing can fail after `body`: no copy, so adding one at a time stays cheap.
        guard let file else { return try state.withLock(body) }
        try saving.withLock { (_: inout Void) throws(MonitoringError) in
            var changed = state.read { $0 }
            try body(&changed)
            try MonitorFile(url: file).save(name: name, rules: rules, entries: Self.entries(of: changed))
            // Only changes add or remove conditions, and they wait for this one: `body` does on the
            // state now what it did on the copy.
            try state.withLock(body)
        }
    }

    private static func entries(of state: State) -> [MonitorFile.Entry] {
        state.records.map { identifier, record in
            MonitorFile.Entry(
                identifier: identifier,
                record: record,
                significantChange: state.engine.significantChanges[identifier],
                visit: state.engine.visits[identifier]
            )
        }
    }
}

extension MonitorRecord {
    mutating func record(_ event: MonitorEvent) {
        state = event.state
        lastEvent = event
    }
}
