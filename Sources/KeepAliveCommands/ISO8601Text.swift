package import FoundationEssentials
import KeepAliveCore

/// UTC times as `2015-02-19T13:12:38.000Z`, to the millisecond, without a formatter.
///
/// A fix line is written for every report, so this is arithmetic on the seconds since 1970
/// (``CivilDate``), not a format style.
package enum ISO8601Text {
    package static func string(_ date: Date) -> String {
        var bytes: [UInt8] = []
        append(date, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    static func append(_ date: Date, to out: inout [UInt8]) {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.toNearestOrEven))
        let (days, dayMilliseconds) = floorDivision(milliseconds, 86_400_000)
        let (year, month, day) = CivilDate.date(days: Int(days))
        let seconds = dayMilliseconds / 1000
        digits(Int64(year), 4, &out)
        out.append(UInt8(ascii: "-"))
        digits(Int64(month), 2, &out)
        out.append(UInt8(ascii: "-"))
        digits(Int64(day), 2, &out)
        out.append(UInt8(ascii: "T"))
        digits(seconds / 3600, 2, &out)
        out.append(UInt8(ascii: ":"))
        digits(seconds / 60 % 60, 2, &out)
        out.append(UInt8(ascii: ":"))
        digits(seconds % 60, 2, &out)
        out.append(UInt8(ascii: "."))
        digits(dayMilliseconds % 1000, 3, &out)
        out.append(UInt8(ascii: "Z"))
    }

    private static func floorDivision(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        let quotient = value >= 0 ? value / divisor : (value - divisor + 1) / divisor
        return (quotient, value - quotient * divisor)
    }

    private static func digits(_ value: Int64, _ width: Int, _ out: inout [UInt8]) {
        var divisor: Int64 = 1
        for _ in 1..<width { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            out.append(UInt8(ascii: "0") + UInt8(rest / divisor % 10))
            rest %= divisor
            divisor /= 10
        }
    }
}
