/// A decoded NMEA 0183 sentence: only the kinds that carry fix information.
///
/// Every field is optional: receivers leave fields empty when they do not know them.
public enum NMEASentence: Sendable, Hashable {
    /// Recommended minimum data: time, validity, position, speed, course, date.
    case rmc(RMC)
    /// Fix data: time, position, quality, satellites, HDOP, altitude.
    case gga(GGA)
    /// GNSS fix data (GGA's multi-constellation form).
    case gns(GGA)
    /// DOP and active satellites: the fix type.
    case gsa(GSA)
    /// Geographic position: time, position, validity.
    case gll(GLL)
    /// Course and speed over ground.
    case vtg(VTG)
    /// Pseudorange error statistics.
    case gst(GST)
    /// Time and date.
    case zda(ZDA)
    /// A valid sentence this decoder has no use for (GSV, TXT, proprietary...).
    case other

    public struct RMC: Sendable, Hashable {
        public var time: NMEATime?
        public var isValid: Bool?
        public var latitude: Double?
        public var longitude: Double?
        public var speedKnots: Double?
        public var course: Double?
        public var date: NMEADate?
        public var faaMode: UInt8?
    }

    public struct GGA: Sendable, Hashable {
        public var time: NMEATime?
        public var latitude: Double?
        public var longitude: Double?
        /// GGA quality (0 no fix, 1 GPS, 2 DGPS, 4 RTK fixed, 5 RTK float, 6 dead reckoning, 8 simulator).
        public var quality: Int?
        public var satellites: Int?
        public var hdop: Double?
        public var altitudeMSL: Double?
        public var geoidSeparation: Double?
    }

    public struct GSA: Sendable, Hashable {
        /// 1 no fix, 2 2D, 3 3D.
        public var fixType: Int?
        public var satellitesUsed: Int
        public var pdop: Double?
        public var hdop: Double?
        public var vdop: Double?
    }

    public struct GLL: Sendable, Hashable {
        public var time: NMEATime?
        public var latitude: Double?
        public var longitude: Double?
        public var isValid: Bool?
        public var faaMode: UInt8?
    }

    public struct VTG: Sendable, Hashable {
        public var course: Double?
        public var speedKnots: Double?
        public var faaMode: UInt8?
    }

    public struct GST: Sendable, Hashable {
        public var time: NMEATime?
        public var latitudeError: Double?
        public var longitudeError: Double?
        public var altitudeError: Double?
    }

    public struct ZDA: Sendable, Hashable {
        public var time: NMEATime?
        public var date: NMEADate?
    }
}

/// A UTC time of day from an NMEA sentence, in milliseconds since midnight.
public struct NMEATime: Sendable, Hashable, Comparable {
    public var millisecondsOfDay: Int

    public init(millisecondsOfDay: Int) { self.millisecondsOfDay = millisecondsOfDay }

    public static func < (lhs: NMEATime, rhs: NMEATime) -> Bool { lhs.millisecondsOfDay < rhs.millisecondsOfDay }
}

/// A UTC calendar date from an NMEA sentence.
public struct NMEADate: Sendable, Hashable {
    public var year: Int
    public var month: Int
    public var day: Int

    public init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }
}
