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

    /// Modes order from no fix to 3D.
    public static func < (lhs: FixMode, rhs: FixMode) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The name the tool prints.
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
    /// An autonomous GNSS fix.
    case gps = 1
    /// Corrected by a differential station (or SBAS).
    case dgps = 2
    /// Real-time kinematic, integer ambiguities fixed: centimetres.
    case rtkFixed = 3
    /// Real-time kinematic, float solution: decimetres.
    case rtkFloat = 4
    /// Estimated from motion, no satellites.
    case deadReckoning = 5
    /// Satellites and dead reckoning combined.
    case gnssDeadReckoning = 6
    /// A fixed, surveyed position: time only.
    case timeOnly = 7
    /// The receiver's simulator (demo mode).
    case simulated = 8
    /// Precise positioning service (PPS, military or PPP).
    case precise = 9

    /// The name the tool prints.
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
