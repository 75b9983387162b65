public import KeepAliveCore

/// What the monitoring strategy reports (journals, and so delivers): OwnTracks' four monitoring
/// modes, mapped onto its conditions and its watch.
///
/// | mode | OwnTracks | watched | journaled |
/// |---|---|---|---|
/// | ``Kind/quiet`` | -1 | nothing | only fixes asked for (`reportLocation`) |
/// | ``Kind/manual`` | 0 | the regions | the fix of each region event, and fixes asked for |
/// | ``Kind/significant`` | 1 | the regions and significant changes | the fix of each event, and fixes asked for |
/// | ``Kind/move`` | 2 | the regions, and every fix of the watch | a fix once the device moved ``displacement`` metres or ``interval`` passed since the last one journaled, and each event's |
///
/// Without a mode the strategy journals every fix its watch brings, as before modes existed.
public struct ReportingMode: Sendable, Hashable, CustomStringConvertible {
    /// The four modes, numbered as OwnTracks numbers them (its `monitoring` setting).
    public enum Kind: Int, Sendable, Hashable, CaseIterable {
        /// Only fixes asked for.
        case quiet = -1
        /// Region events' fixes, and fixes asked for.
        case manual = 0
        /// Region events' and significant changes' fixes, and fixes asked for.
        case significant = 1
        /// A fix each displacement or interval, and events' fixes.
        case move = 2

        /// Its name: `quiet`, `manual`, `significant` or `move`.
        public var name: String {
            switch self {
            case .quiet: "quiet"
            case .manual: "manual"
            case .significant: "significant"
            case .move: "move"
            }
        }
    }

    /// The mode.
    public var kind: Kind
    /// Move mode: a fix is journaled once the device is this many metres from the last one
    /// journaled (OwnTracks' `locatorDisplacement`; iOS's default is 100 m).
    public var displacement: Double
    /// Move mode: or once this long passed since it, on the fixes' own times (OwnTracks'
    /// `locatorInterval`; iOS's default is 300 s).
    public var interval: Duration

    /// A mode; move mode's displacement and interval are iOS's defaults unless given.
    public init(_ kind: Kind, displacement: Double = 100, interval: Duration = .seconds(300)) {
        self.kind = kind
        self.displacement = displacement
        self.interval = interval
    }

    /// The mode named `text` (`quiet`, `manual`, `significant`, `move`) or numbered so by
    /// OwnTracks (`-1`, `0`, `1`, `2`); `nil` for anything else.
    public init?(parsing text: String) {
        guard let kind = Kind.allCases.first(where: { $0.name == text || "\($0.rawValue)" == text }) else { return nil }
        self.init(kind)
    }

    /// Checks move mode's settings: a displacement of 0 to 100 km, an interval of 1 s to a day.
    public func validate() throws(MonitoringModeError) {
        guard displacement.isFinite, (0...100_000).contains(displacement) else {
            throw MonitoringModeError("the displacement must be 0 to 100000 metres, not \(displacement)")
        }
        guard interval >= .seconds(1), interval <= .seconds(86_400) else {
            throw MonitoringModeError("the interval must be 1 s to 86400 s, not \(interval.components.seconds) s")
        }
    }

    /// `move (100 m or 300 s)`, or the mode's name.
    public var description: String {
        guard kind == .move else { return kind.name }
        return "move (\(Int(displacement)) m or \(interval.components.seconds) s)"
    }
}

/// A monitoring mode that cannot be used, and why.
public struct MonitoringModeError: Error, Sendable, Hashable, DescribedError {
    /// What is wrong.
    public var description: String

    init(_ description: String) { self.description = description }
}
