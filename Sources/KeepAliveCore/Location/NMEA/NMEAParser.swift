/// Decodes NMEA 0183 sentences from bytes: checksum first, then the fields of the
/// kinds that carry fix data (RMC, GGA, GNS, GSA, GLL, VTG, GST, ZDA), any talker, and whether
/// a sentence without a fix is one gpsd decodes (GSV, HDG, HDT, MWV, MWD, DBT).
public enum NMEAParser {
    /// Decodes one sentence.
    ///
    /// - Parameters:
    ///   - bytes: a buffer holding the sentence.
    ///   - range: from the leading `$` to the end of the line, without the line ending.
    public static func parse(_ bytes: [UInt8], range: Range<Int>) throws(NMEAError) -> NMEASentence {
        var end = range.upperBound
        while end > range.lowerBound, bytes[end - 1] == UInt8(ascii: " ") || bytes[end - 1] == 0 { end -= 1 }
        guard end - range.lowerBound >= 7, bytes[range.lowerBound] == UInt8(ascii: "$") else {
            throw NMEAError(.malformed)
        }
        // Checksum: XOR of everything between `$` and `*`.
        var star = range.lowerBound + 1
        var sum: UInt8 = 0
        while star < end, bytes[star] != UInt8(ascii: "*") {
            sum ^= bytes[star]
            star += 1
        }
        guard star + 3 <= end else { throw NMEAError(.missingChecksum) }
        guard let high = hexValue(bytes[star + 1]), let low = hexValue(bytes[star + 2]) else {
            throw NMEAError(.missingChecksum)
        }
        guard high << 4 | low == sum else { throw NMEAError(.badChecksum) }
        return try decodeFields(bytes, body: (range.lowerBound + 1)..<star)
    }

    /// Decodes a whole sentence held in a string (tests, tools).
    public static func parse(_ sentence: String) throws(NMEAError) -> NMEASentence {
        let bytes = Array(sentence.utf8)
        return try parse(bytes, range: 0..<bytes.count)
    }

    private static func decodeFields(_ bytes: [UInt8], body: Range<Int>) throws(NMEAError) -> NMEASentence {
        let start = body.lowerBound
        guard body.count >= 5 else { throw NMEAError(.malformed) }
        // Proprietary sentences ($P...) have a free-form address.
        if bytes[start] == UInt8(ascii: "P") { return .other }
        guard body.count == 5 || bytes[start + 5] == UInt8(ascii: ",") else { throw NMEAError(.malformed) }
        let type = UInt32(bytes[start + 2]) << 16 | UInt32(bytes[start + 3]) << 8 | UInt32(bytes[start + 4])
        var fields = NMEAFields(bytes, range: min(start + 6, body.upperBound)..<body.upperBound)
        switch type {
        case Tag.rmc:
            let time = try fields.nextTime()
            let status = fields.nextCharacter()
            let latitude = fields.nextCoordinate(upTo: 90)
            let longitude = fields.nextCoordinate(upTo: 180)
            let speed = fields.nextDouble()
            let course = fields.nextDouble()
            let date = fields.nextCompactDate()
            fields.skip(2)  // magnetic variation and its direction
            let faa = fields.nextCharacter()
            return .rmc(
                .init(
                    time: time,
                    isValid: status.map { $0 == UInt8(ascii: "A") },
                    latitude: latitude,
                    longitude: longitude,
                    speedKnots: speed,
                    course: course,
                    date: date,
                    faaMode: faa
                )
            )
        case Tag.gga:
            return .gga(try decodeGGA(&fields, isGNS: false))
        case Tag.gns:
            return .gns(try decodeGGA(&fields, isGNS: true))
        case Tag.gsa:
            _ = fields.next()  // selection mode, A or M
            let fixType = fields.nextInt()
            var used = 0
            for _ in 0..<12 where !fields.next().isEmpty { used += 1 }
            return .gsa(
                .init(
                    fixType: fixType,
                    satellitesUsed: used,
                    pdop: fields.nextDouble(),
                    hdop: fields.nextDouble(),
                    vdop: fields.nextDouble()
                )
            )
        case Tag.gll:
            let latitude = fields.nextCoordinate(upTo: 90)
            let longitude = fields.nextCoordinate(upTo: 180)
            let time = try fields.nextTime()
            let status = fields.nextCharacter()
            return .gll(
                .init(
                    time: time,
                    latitude: latitude,
                    longitude: longitude,
                    isValid: status.map { $0 == UInt8(ascii: "A") },
                    faaMode: fields.nextCharacter()
                )
            )
        case Tag.vtg:
            let course = fields.nextDouble()
            fields.skip(3)  // T, magnetic course, M
            let knots = fields.nextDouble()
            fields.skip(3)  // N, km/h, K
            return .vtg(.init(course: course, speedKnots: knots, faaMode: fields.nextCharacter()))
        case Tag.gst:
            let time = try fields.nextTime()
            fields.skip(4)  // RMS, ellipse major, minor, orientation
            return .gst(
                .init(
                    time: time,
                    latitudeError: fields.nextDouble(),
                    longitudeError: fields.nextDouble(),
                    altitudeError: fields.nextDouble()
                )
            )
        case Tag.zda:
            let time = try fields.nextTime()
            let day = fields.nextInt()
            let month = fields.nextInt()
            let year = fields.nextInt()
            let date = day.flatMap { d in
                month.flatMap { m in year.flatMap { NMEADate(validating: $0, month: m, day: d) } }
            }
            return .zda(.init(time: time, date: date))
        default:
            return decodeAncillary(type, &fields).map(NMEASentence.ancillary) ?? .other
        }
    }

    /// The sentences without a fix that gpsd 3.22 decodes into a report, with its own checks:
    /// a GSV only at the end of its set, a heading within 0-360, MWV relative in knots and valid,
    /// a DBT with all six fields.
    private static func decodeAncillary(_ type: UInt32, _ fields: inout NMEAFields) -> NMEASentence.Ancillary? {
        switch type {
        case Tag.gsv:
            guard let parts = fields.nextInt(), let part = fields.nextInt(), part >= 1, part == parts else { return nil }
            return .satellitesInView
        case Tag.hdg, Tag.hdt:
            guard let heading = fields.nextDouble(), (0...360).contains(heading) else { return nil }
            return .heading
        case Tag.mwv:
            _ = fields.next()  // angle
            let reference = fields.nextCharacter()
            _ = fields.next()  // speed
            let unit = fields.nextCharacter()
            let status = fields.nextCharacter()
            let relativeInKnots = reference == UInt8(ascii: "R") && unit == UInt8(ascii: "N")
            return relativeInKnots && status == UInt8(ascii: "A") ? .wind : nil
        case Tag.mwd:
            return .wind
        case Tag.dbt:
            guard fields.remaining >= 6 else { return nil }
            let feet = fields.nextDouble()
            _ = fields.next()
            let metres = fields.nextDouble()
            _ = fields.next()
            let fathoms = fields.nextDouble()
            return .depth(metres: metres ?? feet.map { $0 * 0.3048 } ?? fathoms.map { $0 * 1.8288 })
        default:
            return nil
        }
    }

    private static func decodeGGA(_ fields: inout NMEAFields, isGNS: Bool) throws(NMEAError) -> NMEASentence.GGA {
        let time = try fields.nextTime()
        let latitude = fields.nextCoordinate(upTo: 90)
        let longitude = fields.nextCoordinate(upTo: 180)
        var quality: Int?
        if isGNS {
            // One mode character per constellation: any fix counts, N is none.
            quality = fields.nextModeQuality()
        } else {
            quality = fields.nextInt()
        }
        let satellites = fields.nextInt()
        let hdop = fields.nextDouble()
        let altitude = fields.nextDouble()
        if !isGNS { _ = fields.next() }  // M
        let separation = fields.nextDouble()
        return .init(
            time: time,
            latitude: latitude,
            longitude: longitude,
            quality: quality,
            satellites: satellites,
            hdop: hdop,
            altitudeMSL: altitude,
            geoidSeparation: separation
        )
    }

    /// Sentence types as the three address bytes packed in one integer.
    private enum Tag {
        static let rmc = pack("R", "M", "C"), gga = pack("G", "G", "A"), gns = pack("G", "N", "S")
        static let gsa = pack("G", "S", "A"), gll = pack("G", "L", "L"), vtg = pack("V", "T", "G")
        static let gst = pack("G", "S", "T"), zda = pack("Z", "D", "A"), gsv = pack("G", "S", "V")
        static let hdg = pack("H", "D", "G"), hdt = pack("H", "D", "T"), mwv = pack("M", "W", "V")
        static let mwd = pack("M", "W", "D"), dbt = pack("D", "B", "T")

        static func pack(_ a: Unicode.Scalar, _ b: Unicode.Scalar, _ c: Unicode.Scalar) -> UInt32 {
            a.value << 16 | b.value << 8 | c.value
        }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 48...57: byte - 48
        case 65...70: byte - 55
        case 97...102: byte - 87
        default: nil
        }
    }
}
