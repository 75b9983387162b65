public import FoundationEssentials

/// One report from a source: what the receiver said at one moment, fix or not.
///
/// gpsd sends one per TPV message; the NMEA replay one per epoch. A report with a
/// position becomes a ``Location``; one without says the fix is lost or not yet there.
public struct FixReport: Sendable, Hashable {
    /// The fix dimension the receiver reported.
    public var mode: FixMode
    /// The receiver's time, when known.
    public var time: Date?
    /// The position, when the report carries one (mode 2D or 3D with latitude and longitude).
    public var location: Location?

    /// A report of `mode` at `time`, with a position when it has one.
    public init(mode: FixMode, time: Date? = nil, location: Location? = nil) {
        self.mode = mode
        self.time = time
        self.location = location
    }
}
