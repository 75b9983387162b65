import FoundationEssentials
import KeepAliveCore

/// Every region of a monitor, with its state, evaluated against each fix.
///
/// A fix is measured only against the regions near it (``RegionGrid``) and those that are not
/// plainly outside (inside, unknown, or on their way to a change): any other region's box is
/// disjoint from the fix's accuracy box, so it is outside for sure, as it already was.
///
/// A fix decides a region only with its whole accuracy circle: inside when the circle lies
/// inside, outside when it lies outside; a fix whose circle straddles the edge decides
/// nothing and undoes a half-made decision. A state changes when the fixes have said so
/// without a break for ``MonitoringRules/confirmingInterval``, or sooner when
/// ``MonitoringRules/confirmingFixes`` of them lie beyond the edge by twice their accuracy
/// (a device that is moving: a receiver at rest is not that wrong).
struct RegionTable: Sendable {
    private(set) var identifiers: [String] = []
    private(set) var conditions: [MonitorCondition] = []
    private(set) var states: [MonitorState] = []
    private var boxes: [BoundingBox] = []
    /// Regions on their way to a new state: the state, since when the fixes have said so, and
    /// how many of them lay twice their accuracy beyond the edge.
    private var pending: [Progress?] = []
    /// The circles a fix lay inside of with an accuracy wider than their radius, each once: no
    /// such fix can ever decide them (its whole circle never lies inside), so the monitor says
    /// so rather than leave them silently undecided (issue 86; CLMonitor says unknown).
    private var undecidable: [(identifier: String, radius: Double, accuracy: Double)] = []
    /// Every circle found so, as long as it is monitored: each said once.
    private(set) var undecidableRegions: Set<String> = []
    private var slots: [String: Int] = [:]
    private var grid = RegionGrid()
    /// The regions that are not plainly outside: measured against every fix.
    private var attention: Set<Int> = []

    private struct Progress: Sendable {
        var state: MonitorState
        var since: Date
        var farFixes: Int
    }

    /// Adds or replaces the region `identifier`, in `state`.
    mutating func insert(_ condition: MonitorCondition, identifier: String, state: MonitorState) {
        remove(identifier)
        let box: BoundingBox =
            switch condition {
            case .circle(let region): BoundingBox(around: region.center, radius: region.radius)
            case .polygon(let region): BoundingBox(around: region.vertices)
            case .significantChange, .visit: .world
            }
        let slot = identifiers.count
        slots[identifier] = slot
        identifiers.append(identifier)
        conditions.append(condition)
        states.append(state)
        boxes.append(box)
        pending.append(nil)
        grid.insert(slot, box: box)
        updateAttention(slot)
    }

    /// Removes the region `identifier`, if there is one.
    mutating func remove(_ identifier: String) {
        guard let slot = slots.removeValue(forKey: identifier) else { return }
        undecidableRegions.remove(identifier)
        grid.remove(slot, box: boxes[slot])
        attention.remove(slot)
        let last = identifiers.count - 1
        if slot != last {
            // The last region takes the freed slot.
            grid.remove(last, box: boxes[last])
            attention.remove(last)
            identifiers.swapAt(slot, last)
            conditions.swapAt(slot, last)
            states.swapAt(slot, last)
            boxes.swapAt(slot, last)
            pending.swapAt(slot, last)
            slots[identifiers[slot]] = slot
            grid.insert(slot, box: boxes[slot])
            updateAttention(slot)
        }
        identifiers.removeLast()
        conditions.removeLast()
        states.removeLast()
        boxes.removeLast()
        pending.removeLast()
    }

    /// Evaluates the regions against `fix`: those whose state changed, with the new state, in
    /// the order they were added (as far as removals left it).
    mutating func evaluate(_ fix: CountedFix, rules: MonitoringRules) -> [(identifier: String, state: MonitorState)] {
        let fixBox = BoundingBox(around: fix.point, radius: fix.accuracy)
        let candidates = grid.candidates(near: fixBox).map { $0.union(attention).sorted() } ?? Array(identifiers.indices)
        var changes: [(identifier: String, state: MonitorState)] = []
        for slot in candidates {
            defer { updateAttention(slot) }
            // Outside for sure, and already so.
            if states[slot] == .unsatisfied, pending[slot] == nil, boxes[slot].isDisjoint(from: fixBox) { continue }
            guard let verdict = Self.verdict(of: conditions[slot], on: fix), verdict.state != states[slot] else {
                pending[slot] = nil
                noteIfUndecidable(slot, fix)
                continue
            }
            var progress = pending[slot].flatMap { $0.state == verdict.state ? $0 : nil }
                ?? Progress(state: verdict.state, since: fix.date, farFixes: 0)
            if verdict.isFar { progress.farFixes += 1 }
            if progress.farFixes >= rules.confirmingFixes
                || fix.date.timeIntervalSince(progress.since) >= rules.confirmingInterval.seconds
            {
                pending[slot] = nil
                states[slot] = verdict.state
                changes.append((identifiers[slot], verdict.state))
            } else {
                pending[slot] = progress
            }
        }
        return changes
    }

    /// Notes the circle in `slot` once if `fix` lies inside it and is too coarse to decide it.
    private mutating func noteIfUndecidable(_ slot: Int, _ fix: CountedFix) {
        guard case .circle(let circle) = conditions[slot], circle.radius < fix.accuracy, !undecidableRegions.contains(identifiers[slot]),
            let distance = conditions[slot].signedDistance(from: fix.point), distance < 0
        else { return }
        undecidableRegions.insert(identifiers[slot])
        undecidable.append((identifiers[slot], circle.radius, fix.accuracy))
    }

    /// The circles found undecidable since the last call (see ``undecidable``).
    mutating func takeUndecidable() -> [(identifier: String, radius: Double, accuracy: Double)] {
        defer { undecidable = [] }
        return undecidable
    }

    /// Keeps `slot` in ``attention`` while it is not plainly outside.
    private mutating func updateAttention(_ slot: Int) {
        if states[slot] == .unsatisfied, pending[slot] == nil { attention.remove(slot) } else { attention.insert(slot) }
    }

    /// What `fix` says of a region: inside or outside (and whether by twice its accuracy), or
    /// (its accuracy circle on the edge) nothing.
    static func verdict(of condition: MonitorCondition, on fix: CountedFix) -> (state: MonitorState, isFar: Bool)? {
        guard let distance = condition.signedDistance(from: fix.point) else { return nil }
        if distance <= -fix.accuracy { return (.satisfied, distance <= -2 * fix.accuracy) }
        if distance >= fix.accuracy { return (.unsatisfied, distance >= 2 * fix.accuracy) }
        return nil
    }
}
