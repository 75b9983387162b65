package import Foundation

/// An NMEA log whose times are now: what a live receiver sends, for tests of a system clock
/// that is wrong. A fix a second (RMC and GGA), moving north 10 m a second from a point.
package enum LiveNMEA {
    /// Writes `count` fixes starting at `start` to `file`.
    package static func write(to file: URL, start: Date, count: Int, latitude: Double = 52.0, longitude: Double = 5.0) throws {
        var text = ""
        for index in 0..<count {
            let time = start.addingTimeInterval(Double(index))
            let parts = Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "UTC")!, from: time)
            let clock = String(format: "%02d%02d%02d.00", parts.hour!, parts.minute!, parts.second!)
            let date = String(format: "%02d%02d%02d", parts.day!, parts.month!, parts.year! % 100)
            let lat = angle(latitude + Double(index) * 0.00009, degreeDigits: 2)
            let lon = angle(longitude, degreeDigits: 3)
            text += sentence("GPRMC,\(clock),A,\(lat),N,\(lon),E,19.4,0.0,\(date),,,A")
            text += sentence("GPGGA,\(clock),\(lat),N,\(lon),E,1,09,0.9,12.0,M,46.9,M,,")
        }
        try Data(text.utf8).write(to: file)
    }

    private static func angle(_ value: Double, degreeDigits: Int) -> String {
        let degrees = Int(value)
        let minutes = (value - Double(degrees)) * 60
        return String(format: "%0\(degreeDigits)d%07.4f", degrees, minutes)
    }

    private static func sentence(_ body: String) -> String {
        let checksum = body.utf8.reduce(UInt8(0)) { $0 ^ $1 }
        return "$\(body)*\(String(format: "%02X", checksum))\r\n"
    }
}
