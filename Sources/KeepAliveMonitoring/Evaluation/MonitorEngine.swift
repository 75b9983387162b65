import FoundationEssentials
import KeepAliveCore

/// A monitor's conditions and what it has made of the fixes so far, as a value: each fix in,
/// the events out, no I/O (``LocationMonitor`` keeps one behind a lock and saves it).
struct MonitorEngine: Sendable {
    let rules: MonitoringRules
    private(set) var regions = RegionTable()
    private(set) var significantChanges: [String: SignificantChangeTracker] = [:]
    private(set) var visits: [String: DwellDetector] = [:]
    private var stationary = DwellDetector()
    private(set) var odometer = Odometer()
    private var lastFixDate: Date?

    init(rules: MonitoringRules) { self.rules = rules }

    /// Whether the last fixes have kept within ``MonitoringRules/stationaryRadius`` for ``MonitoringRules/stationaryDwell``.
    var isStationary: Bool { stationary.hasArrived }

    /// When the last fix lay wholly beyond the stationary place: forgets the place (true).
    mutating func restartStationaryDetectionIfLeaving() -> Bool {
        guard !stationary.hasArrived || stationary.isLeaving else { return false }
        stationary = DwellDetector()
        return true
    }

    /// Adds or replaces `identifier`, in `state`; a significant change or a visit resumes from
    /// `tracker` or `detector` (a restored monitor), else starts afresh.
    mutating func add(
        _ condition: MonitorCondition,
        identifier: String,
        state: MonitorState,
        significantChange tracker: SignificantChangeTracker = SignificantChangeTracker(),
        visit detector: DwellDetector = DwellDetector()
    ) {
        remove(identifier)
        switch condition {
        case .circle, .polygon: regions.insert(condition, identifier: identifier, state: state)
        case .significantChange: significantChanges[identifier] = tracker
        case .visit: visits[identifier] = detector
        }
    }

    /// Removes `identifier`, if there is one.
    mutating func remove(_ identifier: String) {
        regions.remove(identifier)
        significantChanges[identifier] = nil
        visits[identifier] = nil
    }

    /// The circles found too small for the fixes since the last call (``RegionTable/takeUndecidable()``).
    mutating func takeUndecidable() -> [(identifier: String, radius: Double, accuracy: Double)] { regions.takeUndecidable() }

    /// The events `location` gives; nothing for a fix that does not count (see ``CountedFix``)
    /// or repeats the last one's time (gpsd reports an epoch more than once).
    mutating func evaluate(_ location: Location) -> [MonitorEvent] {
        guard let fix = CountedFix(location, rules: rules), fix.date != lastFixDate else { return [] }
        lastFixDate = fix.date
        var events = regions.evaluate(fix, rules: rules).map {
            MonitorEvent(identifier: $0.identifier, state: $0.state, date: fix.date, location: location)
        }
        for identifier in significantChanges.keys.sorted() where significantChanges[identifier]!.evaluate(fix, rules: rules) {
            events.append(MonitorEvent(identifier: identifier, state: .satisfied, date: fix.date, location: location))
        }
        for identifier in visits.keys.sorted() {
            let change = visits[identifier]!.evaluate(
                fix, radius: rules.visitRadius, dwell: rules.visitDwell, confirmingFixes: rules.confirmingFixes
            )
            switch change {
            case .arrived(let visit):
                events.append(MonitorEvent(identifier: identifier, state: .satisfied, date: fix.date, location: location, visit: visit))
            case .departed(let visit):
                events.append(MonitorEvent(identifier: identifier, state: .unsatisfied, date: fix.date, location: location, visit: visit))
            case nil: break
            }
        }
        _ = stationary.evaluate(
            fix, radius: rules.stationaryRadius, dwell: rules.stationaryDwell, confirmingFixes: rules.confirmingFixes
        )
        odometer.record(fix, movingSpeed: rules.movingSpeed)
        return events
    }
}
