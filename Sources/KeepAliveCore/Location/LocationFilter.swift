import FoundationEssentials

/// Which fixes a continuous update stream delivers.
public struct LocationFilter: Sendable, Hashable {
    /// Drop fixes whose horizontal accuracy is worse (larger) than this many metres, or unknown.
    ///
    /// A filter, where CoreLocation's `desiredAccuracy` is a hint to the system: gpsd's receiver
    /// does what it does, so the only thing the setting can change is what you are given.
    /// CoreLocation's ``bestAccuracy`` (-1, `kCLLocationAccuracyBest`) and ``bestAccuracyForNavigation`` (-2)
    /// mean what they mean there, the best the receiver gives: no limit.
    public var desiredAccuracy: Double?
    /// Drop fixes closer than this many metres to the last one delivered. CoreLocation's
    /// ``noDistanceFilter`` (-1, `kCLDistanceFilterNone`) delivers every fix, as `nil` does.
    public var distanceFilter: Double?
    /// Drop fixes whose receiver time is older than this, or unknown. Ages are measured on the
    /// receiver's clock, gpsd's or a replay's alike: the rule is at ``LocationSource/currentDate``.
    public var maximumAge: Duration?
    /// Drop a fix with the same receiver time as the last one delivered (gpsd often sends
    /// two or three reports per epoch as its sentences arrive).
    public var rejectsDuplicates: Bool
    /// What the stream does with a fix whose receiver time is earlier than the last one it
    /// delivered (a log looped by gpsfake, a receiver that lost its time): either way it is
    /// said first, as ``LocationStatus/receiverTimeWentBack(from:to:)``, never taken silently
    /// as a new fix.
    public var whenTimeGoesBack: BackwardTimePolicy

    /// What a stream does when the receiver's time goes back.
    public enum BackwardTimePolicy: Sendable, Hashable {
        /// The fixes are delivered, their times now the stream's newest (the default: a
        /// receiver whose time jumped goes on being tracked).
        case deliver
        /// The fixes are skipped until the receiver's time passes the newest delivered: a
        /// journal of a looped log keeps each epoch once. A receiver stuck in the past gives
        /// nothing meanwhile.
        case skip
    }

    /// A filter; `nil` lifts a limit.
    public init(
        desiredAccuracy: Double? = nil,
        distanceFilter: Double? = nil,
        maximumAge: Duration? = nil,
        rejectsDuplicates: Bool = true,
        whenTimeGoesBack: BackwardTimePolicy = .deliver
    ) {
        self.desiredAccuracy = desiredAccuracy
        self.distanceFilter = distanceFilter
        self.maximumAge = maximumAge
        self.rejectsDuplicates = rejectsDuplicates
        self.whenTimeGoesBack = whenTimeGoesBack
    }

    /// `kCLLocationAccuracyBest`: the best the receiver gives, every fix (-1, as in CoreLocation).
    public static let bestAccuracy: Double = -1
    /// `kCLLocationAccuracyBestForNavigation`: the same as ``bestAccuracy`` here (-2, as in CoreLocation).
    public static let bestAccuracyForNavigation: Double = -2
    /// `kCLDistanceFilterNone`: every fix, however close (-1, as in CoreLocation).
    public static let noDistanceFilter: Double = -1

    /// The accuracy limit in force: `nil` for none, ``bestAccuracy`` and ``bestAccuracyForNavigation``.
    var accuracyLimit: Double? {
        guard let desiredAccuracy, desiredAccuracy >= 0 else { return nil }
        return desiredAccuracy
    }

    /// The distance limit in force: `nil` for none and ``noDistanceFilter``.
    var distanceLimit: Double? {
        guard let distanceFilter, distanceFilter >= 0 else { return nil }
        return distanceFilter
    }

    /// Every report with a position, unfiltered.
    public static let everything = LocationFilter(rejectsDuplicates: false)

    /// Throws ``LocationError/Code/invalidOptions`` for negative (other than CoreLocation's
    /// constants) or non-finite values, and for a maximum age of 0 (no fix is that new), each
    /// saying what to pass instead.
    public func validate() throws(LocationError) {
        if let desiredAccuracy, !(desiredAccuracy > 0 && desiredAccuracy.isFinite),
            desiredAccuracy != Self.bestAccuracy, desiredAccuracy != Self.bestAccuracyForNavigation
        {
            throw .invalidOptions(
                "desired accuracy must be a positive number of metres, or -1 (best) or -2 (best for "
                    + "navigation) as in CoreLocation, not \(desiredAccuracy)"
            )
        }
        if let distanceFilter, !(distanceFilter >= 0 && distanceFilter.isFinite), distanceFilter != Self.noDistanceFilter {
            throw .invalidOptions(
                "distance filter must be zero or more metres, or -1 (none) as in CoreLocation, not \(distanceFilter)"
            )
        }
        if let maximumAge, maximumAge < .zero {
            throw .invalidOptions("maximum age must not be negative, not \(maximumAge.secondsText)")
        }
        if maximumAge == .zero {
            // Every fix is some microseconds old when judged: a limit of 0 lets none through.
            throw .invalidOptions(
                "a maximum age of 0 s lets no fix through (each is a little old by the time it is judged): leave "
                    + "maximumAge out for a fix that comes after the request (a one-shot without one never answers "
                    + "from the cache), or pass at least a receiver's cycle, such as .seconds(1)"
            )
        }
    }

    /// Whether a fix is accurate and fresh enough (the distance and duplicate rules need history).
    ///
    /// `now` is read only when there is an age limit: the source's clock can cost a lock.
    func accepts(_ location: Location, now: () -> Date) -> Bool {
        if let desiredAccuracy = accuracyLimit {
            guard let accuracy = location.horizontalAccuracy, accuracy <= desiredAccuracy else { return false }
        }
        if let maximumAge {
            guard let timestamp = location.timestamp, now().timeIntervalSince(timestamp) <= maximumAge.seconds
            else { return false }
        }
        return true
    }

    /// The rule that turns `location` down, in words, or `nil` when it passes (for errors, not per fix).
    /// `clock` names what `now` was read from, for the age rule.
    func rejection(of location: Location, now: Date, clock: String) -> String? {
        if let desiredAccuracy = accuracyLimit {
            guard let accuracy = location.horizontalAccuracy else {
                return "its accuracy is unknown, and the request asks for \(desiredAccuracy.significant(3)) m or better"
            }
            if accuracy > desiredAccuracy {
                return "±\(accuracy.fixed(1)) m is worse than the \(desiredAccuracy.significant(3)) m asked for; "
                    + "to take fixes like it, pass a desiredAccuracy of \(Int(accuracy.rounded(.up))) m or more, "
                    + "or LocationFilter.bestAccuracy for whatever the receiver gives"
            }
        }
        if let maximumAge {
            guard let timestamp = location.timestamp else {
                return "it has no time, so its age is unknown, and the request allows \(maximumAge.secondsText)"
            }
            let age = now.timeIntervalSince(timestamp)
            if age > maximumAge.seconds {
                return "it is \(ageText(age)) old by \(clock), more than the maximum age of \(maximumAge.secondsText)"
            }
        }
        return nil
    }

    private func ageText(_ seconds: Double) -> String {
        switch seconds {
        case ..<120: "\(seconds.significant(3)) s"
        case ..<7_200: "\((seconds / 60).significant(3)) min"
        case ..<172_800: "\((seconds / 3_600).significant(3)) h"
        default: "\(Int(seconds / 86_400)) days"
        }
    }
}

/// One stream's filtering state: turns source events into the updates that stream delivers.
struct LocationFilterState: Sendable {
    let filter: LocationFilter
    private var lastDelivered: Location?
    private var lastDeliveredTime: Date?
    private var fix: FixKnowledge = .unknown
    private var lastWasUntimed = false
    /// Whether fixes are being skipped for a time that went back (``LocationFilter/BackwardTimePolicy/skip``).
    private var isSkippingBack = false

    private enum FixKnowledge { case unknown, none, have, lost }

    init(filter: LocationFilter) { self.filter = filter }

    /// Same receiver time as the last fix delivered; or, before the receiver has said the
    /// date, the same place again with no time at all.
    private func isDuplicate(_ location: Location) -> Bool {
        if let time = location.timestamp { return time == lastDeliveredTime }
        guard lastWasUntimed, let last = lastDelivered else { return false }
        return last.latitude == location.latitude && last.longitude == location.longitude && last.mode == location.mode
    }

    /// Gives `deliver` the updates this event makes for the stream, if any: at most a status
    /// and a fix.
    mutating func consider(_ event: SourceEvent, now: () -> Date, deliver: (LocationUpdate) -> Void) {
        if let update = lastUpdate(for: event, now: now, sayingFirst: deliver) { deliver(update) }
    }

    /// The last update `event` makes, after any it says first through `say` (the receiver's
    /// time gone back, before the fix).
    private mutating func lastUpdate(for event: SourceEvent, now: () -> Date, sayingFirst say: (LocationUpdate) -> Void) -> LocationUpdate? {
        switch event {
        case .status(let status):
            return .status(status)
        case .report(let report):
            guard report.mode.hasPosition else {
                switch fix {
                case .have:
                    fix = .lost
                    lastDelivered = nil  // the next fix is news, however close
                    return .status(.fixLost)
                case .unknown:
                    fix = .none
                    return .status(.noFix)
                case .none, .lost:
                    return nil
                }
            }
            guard let location = report.location else { return nil }  // mode before position (GSA first)
            if filter.rejectsDuplicates, isDuplicate(location) { return nil }
            guard filter.accepts(location, now: now) else { return nil }
            if let time = location.timestamp, let last = lastDeliveredTime, time < last {
                let wentBack = LocationUpdate.status(.receiverTimeWentBack(from: last, to: time))
                guard filter.whenTimeGoesBack == .deliver else {
                    if !isSkippingBack { say(wentBack) }
                    isSkippingBack = true
                    return nil
                }
                say(wentBack)
            }
            isSkippingBack = false
            if let distance = filter.distanceLimit, let last = lastDelivered, location.distance(from: last) < distance
            {
                return nil
            }
            fix = .have
            lastDelivered = location
            lastWasUntimed = location.timestamp == nil
            lastDeliveredTime = location.timestamp ?? lastDeliveredTime
            return .location(location)
        }
    }
}
