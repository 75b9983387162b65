/// Walks the comma-separated fields of one sentence in place, without copying bytes.
struct NMEAFields {
    private let bytes: [UInt8]
    private var position: Int
    private let end: Int

    /// - Parameters:
    ///   - range: the sentence's data, after the address and before the `*`.
    init(_ bytes: [UInt8], range: Range<Int>) {
        self.bytes = bytes
        self.position = range.lowerBound
        self.end = range.upperBound
    }

    /// The next field's byte range; an empty range for an empty or missing field.
    mutating func next() -> Range<Int> {
        guard position <= end else { return end..<end }
        let start = position
        var index = position
        while index < end && bytes[index] != UInt8(ascii: ",") { index += 1 }
        position = index + 1
        return start..<index
    }

    /// How many fields are left, empty ones included.
    var remaining: Int {
        guard position <= end else { return 0 }
        return 1 + bytes[position..<end].reduce(0) { $0 + ($1 == UInt8(ascii: ",") ? 1 : 0) }
    }

    mutating func skip(_ count: Int) {
        for _ in 0..<count { _ = next() }
    }

    mutating func nextDouble() -> Double? { Self.decimal(bytes, next())?.value }

    mutating func nextInt() -> Int? {
        let field = next()
        guard let decimal = Self.decimal(bytes, field), decimal.scale == 1 else { return nil }
        return Int(decimal.mantissa)
    }

    mutating func nextCharacter() -> UInt8? {
        let field = next()
        return field.isEmpty ? nil : bytes[field.lowerBound]
    }

    /// A GNS mode field (one character per constellation) as a GGA quality:
    /// 0 when every character is `N`, 2 when any is `D`, otherwise 1.
    mutating func nextModeQuality() -> Int? {
        let field = next()
        guard !field.isEmpty else { return nil }
        var quality = 0
        for index in field {
            switch bytes[index] {
            case UInt8(ascii: "N"): continue
            case UInt8(ascii: "D"): quality = 2
            default: quality = max(quality, 1)
            }
        }
        return quality
    }

    /// `hhmmss.sss` as milliseconds since midnight; `nil` for an empty field. A time that is
    /// there but cannot be read (an hour of 24, letters) makes the whole sentence malformed: gpsd
    /// does not let such a sentence into the epoch either. Seconds of 60 (a leap second) run
    /// into the next minute, as in gpsd.
    mutating func nextTime() throws(NMEAError) -> NMEATime? {
        let field = next()
        guard !field.isEmpty else { return nil }
        guard field.count >= 6, let hh = Self.twoDigits(bytes, field.lowerBound),
            let mm = Self.twoDigits(bytes, field.lowerBound + 2),
            let seconds = Self.decimal(bytes, (field.lowerBound + 4)..<field.upperBound),
            hh < 24, mm < 60, seconds.value >= 0, seconds.value < 61
        else { throw NMEAError(.malformed) }
        let millis = (seconds.value * 1000).rounded()
        return NMEATime(millisecondsOfDay: (hh * 3600 + mm * 60) * 1000 + Int(millis))
    }

    /// `ddmmyy` (RMC).
    mutating func nextCompactDate() -> NMEADate? {
        let field = next()
        guard field.count == 6, let dd = Self.twoDigits(bytes, field.lowerBound),
            let mo = Self.twoDigits(bytes, field.lowerBound + 2),
            let yy = Self.twoDigits(bytes, field.lowerBound + 4)
        else { return nil }
        // NMEA's two-digit year: 80-99 are the 1900s, as gpsd reads them.
        return NMEADate(validating: yy < 80 ? 2000 + yy : 1900 + yy, month: mo, day: dd)
    }

    /// `ddmm.mmmm,N` or `dddmm.mmmm,E` as signed degrees; `nil` past `limit` degrees (90 for a
    /// latitude, 180 for a longitude), as a position nobody can be at.
    mutating func nextCoordinate(upTo limit: Double) -> Double? {
        let value = next()
        let hemisphere = nextCharacter()
        guard let decimal = Self.decimal(bytes, value), decimal.mantissa >= 0, let hemisphere else { return nil }
        // Split degrees from minutes on the integer mantissa, so no rounding creeps in.
        let hundredDegrees = 100 * decimal.scale
        let degrees = decimal.mantissa / hundredDegrees
        let minutes = Double(decimal.mantissa - degrees * hundredDegrees) / Double(decimal.scale)
        guard minutes < 60 else { return nil }
        let magnitude = Double(degrees) + minutes / 60
        guard magnitude <= limit else { return nil }
        switch hemisphere {
        case UInt8(ascii: "N"), UInt8(ascii: "E"): return magnitude
        case UInt8(ascii: "S"), UInt8(ascii: "W"): return -magnitude
        default: return nil
        }
    }

    private static func twoDigits(_ bytes: [UInt8], _ index: Int) -> Int? {
        let tens = Int(bytes[index]) - 48
        let ones = Int(bytes[index + 1]) - 48
        guard (0...9).contains(tens), (0...9).contains(ones) else { return nil }
        return tens * 10 + ones
    }

    struct Decimal {
        var mantissa: Int
        /// A power of ten: the value is `mantissa / scale`.
        var scale: Int
        var value: Double { Double(mantissa) / Double(scale) }
    }

    /// A plain decimal number (`-12.345`), read digit by digit: no `String`, no locale.
    static func decimal(_ bytes: [UInt8], _ range: Range<Int>) -> Decimal? {
        var index = range.lowerBound
        guard index < range.upperBound else { return nil }
        var negative = false
        if bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") {
            negative = bytes[index] == UInt8(ascii: "-")
            index += 1
        }
        var mantissa = 0
        var scale = 1
        var digits = 0
        var seenPoint = false
        while index < range.upperBound {
            let byte = bytes[index]
            if byte == UInt8(ascii: "."), !seenPoint {
                seenPoint = true
            } else if byte >= 48 && byte <= 57 {
                digits += 1
                guard digits <= 17 else { return nil }  // stays exact in Int and Double
                mantissa = mantissa * 10 + Int(byte - 48)
                if seenPoint { scale *= 10 }
            } else {
                return nil
            }
            index += 1
        }
        guard digits > 0 else { return nil }
        return Decimal(mantissa: negative ? -mantissa : mantissa, scale: scale)
    }
}

extension NMEADate {
    init?(validating year: Int, month: Int, day: Int) {
        guard (1...12).contains(month), (1...31).contains(day) else { return nil }
        self.init(year: year, month: month, day: day)
    }
}
