import FoundationEssentials
import KeepAliveCore

/// The significant-change service: an event at the first fix, then each time the device has
/// surely moved ``MonitoringRules/significantDistance`` from the last event's fix (the distance
/// less both fixes' accuracies), at most one per ``MonitoringRules/significantInterval``.
///
/// A move made within the interval is not lost: the first fix after it that is still far
/// enough gives the event.
struct SignificantChangeTracker: Sendable, Hashable, Codable {
    /// The last event's position, accuracy and time.
    var anchor: Coordinate?
    var anchorAccuracy: Double = 0
    var anchorDate: Date?

    /// Whether `fix` is a significant change.
    mutating func evaluate(_ fix: CountedFix, rules: MonitoringRules) -> Bool {
        if let anchor, let anchorDate {
            let surely = anchor.distance(to: fix.point) - anchorAccuracy - fix.accuracy
            guard surely >= rules.significantDistance,
                fix.date.timeIntervalSince(anchorDate) >= rules.significantInterval.seconds
            else { return false }
        }
        anchor = fix.point
        anchorAccuracy = fix.accuracy
        anchorDate = fix.date
        return true
    }
}
