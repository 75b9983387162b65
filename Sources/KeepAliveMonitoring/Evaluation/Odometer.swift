import KeepAliveCore

/// Distance travelled, from accepted fixes, that does not grow while the receiver rests.
///
/// A step is added when a fix lies farther from the last counted position than both fixes'
/// accuracies together (the noise of two fixes at rest stays within that), and, when the
/// receiver reports its speed, that speed is at least ``MonitoringRules/movingSpeed``. The
/// steps are straight lines between counted positions, so a winding road reads a little
/// short: a step is at least two accuracies long.
struct Odometer: Sendable, Hashable, Codable {
    /// Metres travelled.
    private(set) var distance: Double = 0
    private var anchor: Coordinate?
    private var anchorAccuracy: Double = 0

    /// Adds the step to `fix`, if it is one.
    mutating func record(_ fix: CountedFix, movingSpeed: Double) {
        guard let anchor else {
            self.anchor = fix.point
            anchorAccuracy = fix.accuracy
            return
        }
        if let speed = fix.location.speed, speed < movingSpeed { return }
        let step = anchor.distance(to: fix.point)
        guard step > anchorAccuracy + fix.accuracy else { return }
        distance += step
        self.anchor = fix.point
        anchorAccuracy = fix.accuracy
    }
}
