import FoundationEssentials

/// Every region of a monitor, with its state, evaluated against each fix.
///
/// The regions are kept in arrays side by side (boxes, states), so a fix is tested against
/// 100,000 of them in one pass over memory: a region whose box is disjoint from the fix's
/// accuracy box is outside for sure, and is skipped when it already was; only the others
/// are measured exactly.
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
    private var slots: [String: Int] = [:]
    /// Regions on their way to a new state: the state, since when the fixes have said so, and
    /// how many of them lay twice their accuracy beyond the edge.
    private var pending: [Int: (state: MonitorState, since: Date, farFixes: Int)] = [:]

    var count: Int { identifiers.count }

    /// Adds or replaces the region `identifier`, in `state`.
    mutating func insert(_ condition: MonitorCondition, identifier: String, state: MonitorState) {
        let box: BoundingBox =
            switch condition {
            case .circle(let region): BoundingBox(around: region.center, radius: region.radius)
            case .polygon(let region): BoundingBox(around: region.vertices)
            case .significantChange, .visit: .world
            }
        if let slot = slots[identifier] {
            conditions[slot] = condition
            states[slot] = state
            boxes[slot] = box
            pending[slot] = nil
            return
        }
        slots[identifier] = identifiers.count
        identifiers.append(identifier)
        conditions.append(condition)
        states.append(state)
        boxes.append(box)
    }

    /// Removes the region `identifier`, if there is one.
    mutating func remove(_ identifier: String) {
        guard let slot = slots.removeValue(forKey: identifier) else { return }
        let last = identifiers.count - 1
        pending[slot] = nil
        if slot != last {
            identifiers.swapAt(slot, last)
            conditions.swapAt(slot, last)
            states.swapAt(slot, last)
            boxes.swapAt(slot, last)
            slots[identifiers[slot]] = slot
            if let moved = pending.removeValue(forKey: last) { pending[slot] = moved }
        }
        identifiers.removeLast()
        conditions.removeLast()
        states.removeLast()
        boxes.removeLast()
    }

    /// The state of `identifier`.
    func state(of identifier: String) -> MonitorState? { slots[identifier].map { states[$0] } }

    /// Evaluates every region against `fix`: the regions whose state changed, with the new state.
    mutating func evaluate(_ fix: CountedFix, rules: MonitoringRules) -> [(identifier: String, state: MonitorState)] {
        let fixBox = BoundingBox(around: fix.point, radius: fix.accuracy)
        let measureAll = fixBox.isWorld
        var changes: [(identifier: String, state: MonitorState)] = []
        for slot in boxes.indices {
            // Outside for sure, and already so: the common case, skipped without measuring.
            if states[slot] == .unsatisfied, !measureAll, boxes[slot].isDisjoint(from: fixBox),
                pending.isEmpty || pending[slot] == nil
            {
                continue
            }
            let verdict = Self.verdict(of: conditions[slot], on: fix)
            guard let verdict, verdict.state != states[slot] else {
                if !pending.isEmpty { pending[slot] = nil }
                continue
            }
            var progress = pending[slot].flatMap { $0.state == verdict.state ? $0 : nil } ?? (state: verdict.state, since: fix.date, farFixes: 0)
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

    /// What `fix` says of a region: inside or outside (and whether by twice its accuracy), or
    /// (its accuracy circle on the edge) nothing.
    static func verdict(of condition: MonitorCondition, on fix: CountedFix) -> (state: MonitorState, isFar: Bool)? {
        guard let distance = condition.signedDistance(from: fix.point) else { return nil }
        if distance <= -fix.accuracy { return (.satisfied, distance <= -2 * fix.accuracy) }
        if distance >= fix.accuracy { return (.unsatisfied, distance >= 2 * fix.accuracy) }
        return nil
    }
}
