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
    /// A sentence with no fix in it that gpsd 3.22 still decodes: the last of a satellites-in-view
    /// set, a heading, wind, depth. On a bus with a depth sounder gpsd reports the epoch after
    /// each one, and that decides what a late sentence adds to its second (see ``NMEAFixAssembler``).
    case ancillary(Ancillary)
    /// A valid sentence this decoder has no use for (the first parts of a GSV set, TXT,
    /// proprietary...).
    case other

    /// The fields of an RMC sentence.
    public struct RMC: Sendable, Hashable {
        /// UTC time of day of the fix.
        public var time: NMEATime?
        /// Status `A` (valid) or `V` (void); `nil` when the field is empty.
        public var isValid: Bool?
        /// Degrees, north positive.
        public var latitude: Double?
        /// Degrees, east positive.
        public var longitude: Double?
        /// Speed over ground in knots.
        public var speedKnots: Double?
        /// Course over ground, degrees from true north.
        public var course: Double?
        /// The UTC date (two-digit years 80-99 are the 1900s, as gpsd reads them).
        public var date: NMEADate?
        /// The FAA mode indicator (NMEA 2.3 and later) as its ASCII byte: `A`, `D`, `E`, `R`, `F`, `N`...
        public var faaMode: UInt8?
    }

    /// The fields of a GGA (or GNS) sentence.
    public struct GGA: Sendable, Hashable {
        /// UTC time of day of the fix.
        public var time: NMEATime?
        /// Degrees, north positive.
        public var latitude: Double?
        /// Degrees, east positive.
        public var longitude: Double?
        /// GGA quality (0 no fix, 1 GPS, 2 DGPS, 4 RTK fixed, 5 RTK float, 6 dead reckoning, 8 simulator).
        public var quality: Int?
        /// Satellites used in the fix.
        public var satellites: Int?
        /// Horizontal dilution of precision.
        public var hdop: Double?
        /// Altitude above mean sea level, metres.
        public var altitudeMSL: Double?
        /// Height of the geoid above the WGS84 ellipsoid, metres.
        public var geoidSeparation: Double?
    }

    /// The fields of a GSA sentence.
    public struct GSA: Sendable, Hashable {
        /// 1 no fix, 2 2D, 3 3D.
        public var fixType: Int?
        /// How many of the 12 satellite fields are filled.
        public var satellitesUsed: Int
        /// Position dilution of precision.
        public var pdop: Double?
        /// Horizontal dilution of precision.
        public var hdop: Double?
        /// Vertical dilution of precision.
        public var vdop: Double?
    }

    /// The fields of a GLL sentence.
    public struct GLL: Sendable, Hashable {
        /// UTC time of day of the position.
        public var time: NMEATime?
        /// Degrees, north positive.
        public var latitude: Double?
        /// Degrees, east positive.
        public var longitude: Double?
        /// Status `A` (valid) or `V` (void).
        public var isValid: Bool?
        /// The FAA mode indicator as its ASCII byte.
        public var faaMode: UInt8?
    }

    /// The fields of a VTG sentence.
    public struct VTG: Sendable, Hashable {
        /// Course over ground, degrees from true north.
        public var course: Double?
        /// Speed over ground in knots.
        public var speedKnots: Double?
        /// The FAA mode indicator as its ASCII byte.
        public var faaMode: UInt8?
    }

    /// The fields of a GST sentence.
    public struct GST: Sendable, Hashable {
        /// UTC time of day of the fix it describes.
        public var time: NMEATime?
        /// Standard deviation of the latitude error, metres.
        public var latitudeError: Double?
        /// Standard deviation of the longitude error, metres.
        public var longitudeError: Double?
        /// Standard deviation of the altitude error, metres.
        public var altitudeError: Double?
    }

    /// What an ``NMEASentence/ancillary(_:)`` sentence reports, as gpsd 3.22 decodes it.
    public enum Ancillary: Sendable, Hashable {
        /// The last sentence of a satellites-in-view (GSV) set.
        case satellitesInView
        /// A heading (HDG, HDT) from 0 to 360 degrees.
        case heading
        /// Wind: MWD, or MWV relative to the bow, in knots, with a valid status.
        case wind
        /// Depth below the transducer (DBT) in metres; `nil` when its fields are empty. From
        /// the first DBT on, gpsd 3.22 reports the epoch after every sentence without a fix time.
        case depth(metres: Double?)
    }

    /// The fields of a ZDA sentence.
    public struct ZDA: Sendable, Hashable {
        /// UTC time of day.
        public var time: NMEATime?
        /// The UTC date, with a four-digit year.
        public var date: NMEADate?
    }
}

/// A UTC time of day from an NMEA sentence, in milliseconds since midnight.
public struct NMEATime: Sendable, Hashable, Comparable {
    /// Milliseconds since 00:00:00 UTC (a leap second's 60 runs into the next minute).
    public var millisecondsOfDay: Int

    /// A time of day from its milliseconds since midnight.
    public init(millisecondsOfDay: Int) { self.millisecondsOfDay = millisecondsOfDay }

    /// Earlier in the day first.
    public static func < (lhs: NMEATime, rhs: NMEATime) -> Bool { lhs.millisecondsOfDay < rhs.millisecondsOfDay }
}

/// A UTC calendar date from an NMEA sentence.
public struct NMEADate: Sendable, Hashable {
    /// The year, four digits.
    public var year: Int
    /// 1 to 12.
    public var month: Int
    /// 1 to 31.
    public var day: Int

    /// A date from its parts (not checked: see the parser for the validating form).
    public init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }
}
