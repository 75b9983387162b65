import FoundationEssentials
import Glibc

/// The NMEA a simulated receiver outputs each second: GGA, RMC and GST (the error gpsd reports
/// as the fix's accuracy), or, before a fix, the same with no position.
enum NMEASentences {
    /// The sentences of a fix at `position` with `error` metres (1 sigma) at `date`.
    static func fix(_ position: SimulatedTrack.Position, error: Double, date: Date) -> [String] {
        let (time, day) = stamp(date)
        let latitude = angle(abs(position.latitude), degreesWidth: 2) + (position.latitude < 0 ? ",S" : ",N")
        let longitude = angle(abs(position.longitude), degreesWidth: 3) + (position.longitude < 0 ? ",W" : ",E")
        let hdop = format(max(0.6, error / 2.5), 1)
        let knots = format(position.speed / 0.514444, 2)
        return [
            sentence("GPGGA,\(time),\(latitude),\(longitude),1,09,\(hdop),52.0,M,47.0,M,,"),
            sentence("GPRMC,\(time),A,\(latitude),\(longitude),\(knots),\(format(position.course, 1)),\(day),,,A"),
            sentence("GPGST,\(time),\(format(error, 1)),\(format(error, 1)),\(format(error, 1)),0.0,\(format(error / 1.414, 1)),\(format(error / 1.414, 1)),\(format(error * 1.5, 1))"),
        ]
    }

    /// The sentences of a second with no fix yet.
    static func noFix(date: Date) -> [String] {
        let (time, day) = stamp(date)
        return [sentence("GPGGA,\(time),,,,,0,00,99.99,,,,,,"), sentence("GPRMC,\(time),V,,,,,,,\(day),,,N")]
    }

    /// `$BODY*CS\r\n`.
    static func sentence(_ body: String) -> String {
        let checksum = body.utf8.reduce(UInt8(0)) { $0 ^ $1 }
        let hex = Array("0123456789ABCDEF")
        return "$\(body)*\(hex[Int(checksum >> 4)])\(hex[Int(checksum & 0xF)])\r\n"
    }

    private static func stamp(_ date: Date) -> (time: String, day: String) {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let hundredths = Int((date.timeIntervalSince1970 - Double(seconds)) * 100)
        let time = two(parts.tm_hour) + two(parts.tm_min) + two(parts.tm_sec) + "." + two(Int32(hundredths))
        let day = two(parts.tm_mday) + two(parts.tm_mon + 1) + two(parts.tm_year % 100)
        return (time, day)
    }

    private static func angle(_ degrees: Double, degreesWidth: Int) -> String {
        let whole = Int(degrees)
        let minutes = (degrees - Double(whole)) * 60
        let head = String(whole)
        return String(repeating: "0", count: max(0, degreesWidth - head.count)) + head + (minutes < 10 ? "0" : "") + format(minutes, 5)
    }

    private static func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }

    /// `value` with `decimals` decimals, never in exponent form.
    static func format(_ value: Double, _ decimals: Int) -> String {
        var scale = 1
        for _ in 0..<decimals { scale *= 10 }
        let scaled = Int((abs(value) * Double(scale)).rounded())
        let fraction = String(scaled % scale)
        let sign = value < 0 && scaled != 0 ? "-" : ""
        guard decimals > 0 else { return sign + String(scaled) }
        return sign + String(scaled / scale) + "." + String(repeating: "0", count: decimals - fraction.count) + fraction
    }
}
