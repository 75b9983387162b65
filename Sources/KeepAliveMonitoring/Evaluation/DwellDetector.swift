import FoundationEssentials
import KeepAliveCore

/// Finds stays: fixes that keep within `radius` metres of their centre for `dwell`. Visits
/// (100 m, 5 minutes) and stationary detection (25 m, 2 minutes) are two of them.
///
/// A fix within `radius` of the centre joins the stay. A fix whose accuracy circle lies wholly
/// beyond it counts towards leaving: `confirmingFixes` of them in a row end the stay (a
/// departure, if it had lasted long enough to be an arrival) and start a new one at the last.
/// A fix in between decides nothing.
struct DwellDetector: Sendable, Hashable, Codable {
    /// What a fix changed.
    enum Change: Sendable, Hashable {
        /// The stay has lasted `dwell`: arrived.
        case arrived(Visit)
        /// Left a stay that had been an arrival.
        case departed(Visit)
    }

    private struct Stay: Sendable, Hashable, Codable {
        var first: Date
        var last: Date
        var latitudeSum: Double
        var longitudeSum: Double
        var count: Double
        var spread: Double

        init(_ fix: CountedFix) {
            first = fix.date
            last = fix.date
            latitudeSum = fix.point.latitude
            longitudeSum = fix.point.longitude
            count = 1
            spread = 0
        }

        var center: Coordinate { Coordinate(latitude: latitudeSum / count, longitude: longitudeSum / count) }

        mutating func add(_ fix: CountedFix, distance: Double) {
            last = fix.date
            latitudeSum += fix.point.latitude
            longitudeSum += fix.point.longitude
            count += 1
            spread = max(spread, distance)
        }

        func visit(departed: Bool) -> Visit {
            Visit(coordinate: center, radius: spread, arrival: first, departure: departed ? last : nil)
        }
    }

    private var stay: Stay?
    private var leaving = 0
    /// Whether the current stay has lasted long enough to be an arrival.
    private(set) var hasArrived = false

    /// Whether the last fix lay wholly beyond the stay (one of the fixes that end it).
    var isLeaving: Bool { leaving > 0 }

    /// Takes `fix` into account: an arrival or a departure, or nothing.
    mutating func evaluate(_ fix: CountedFix, radius: Double, dwell: Duration, confirmingFixes: Int) -> Change? {
        guard var current = stay else {
            stay = Stay(fix)
            return nil
        }
        let distance = current.center.distance(to: fix.point)
        if distance <= radius {
            leaving = 0
            current.add(fix, distance: distance)
            stay = current
            guard !hasArrived, current.last.timeIntervalSince(current.first) >= dwell.seconds else { return nil }
            hasArrived = true
            return .arrived(current.visit(departed: false))
        }
        guard distance - fix.accuracy > radius else { return nil }
        leaving += 1
        guard leaving >= confirmingFixes else { return nil }
        let departed = hasArrived ? current.visit(departed: true) : nil
        stay = Stay(fix)
        leaving = 0
        hasArrived = false
        return departed.map { .departed($0) }
    }
}
