/// The dimension of a fix, as gpsd's TPV `mode`.
public enum FixMode: Int, Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    /// The receiver has said nothing about its fix yet.
    case notSeen = 0
    /// The receiver has no fix.
    case noFix = 1
    /// Latitude and longitude only.
    case twoDimensional = 2
    /// Latitude, longitude and altitude.
    case threeDimensional = 3

    /// Whether a position comes with this mode.
    public var hasPosition: Bool { self >= .twoDimensional }

    public static func < (lhs: FixMode, rhs: FixMode) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String {
        switch self {
        case .notSeen: "unknown"
        case .noFix: "no fix"
        case .twoDimensional: "2D"
        case .threeDimensional: "3D"
        }
    }
}

/// How a fix was obtained, as gpsd's TPV `status` (NMEA GGA quality, FAA mode).
public enum FixQuality: Int, Sendable, Hashable, Codable, CustomStringConvertible {
    case gps = 1
    case dgps = 2
    case rtkFixed = 3
    case rtkFloat = 4
    case deadReckoning = 5
    case gnssDeadReckoning = 6
    case timeOnly = 7
    case simulated = 8
    case precise = 9

    public var description: String {
        switch self {
        case .gps: "GPS"
        case .dgps: "DGPS"
        case .rtkFixed: "RTK fixed"
        case .rtkFloat: "RTK float"
        case .deadReckoning: "dead reckoning"
        case .gnssDeadReckoning: "GNSS + dead reckoning"
        case .timeOnly: "time only"
        case .simulated: "simulated"
        case .precise: "PPS"
        }
    }
}
