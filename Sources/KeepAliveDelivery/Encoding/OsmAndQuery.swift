import FoundationEssentials
import KeepAliveJournal
import KeepAliveCore

/// Traccar's OsmAnd protocol: one location as query parameters, `timestamp` in seconds,
/// `speed` in knots, `bearing`, `altitude` and `accuracy` in degrees and metres, `batt` in percent.
enum OsmAndQuery {
    static func query(_ record: JournalRecord, deviceID: String) -> String {
        let fix = record.location
        let time = fix.timestamp ?? record.recordedAt
        var query = "id=\(percentEncoded(deviceID))&lat=\(fix.latitude.fixed(7))&lon=\(fix.longitude.fixed(7))"
        query += "&timestamp=\(Int64(time.timeIntervalSince1970.rounded(.down)))"
        if let speed = fix.speed, speed.isFinite { query += "&speed=\((speed / 0.514444).fixed(2))" }
        if let course = fix.course, course.isFinite { query += "&bearing=\(course.fixed(1))" }
        if let altitude = fix.altitudeMSL ?? fix.altitudeHAE, altitude.isFinite { query += "&altitude=\(altitude.fixed(1))" }
        if let accuracy = fix.horizontalAccuracy, accuracy.isFinite { query += "&accuracy=\(accuracy.fixed(1))" }
        if let battery = record.battery { query += "&batt=\(battery)" }
        return query
    }

    static func percentEncoded(_ text: String) -> String {
        var result = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                result += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return result
    }
}
