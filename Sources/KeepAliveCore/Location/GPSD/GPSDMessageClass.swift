/// The `class` of one gpsd JSON message, read from its raw bytes before anything else.
///
/// gpsd writes the class first (`{"class":"TPV",...`), so this is a short compare, not a parse.
/// A line that is not a JSON object with a class is ``malformed``: gpsd never sends one, so the
/// stream is not to be trusted after it.
enum GPSDMessageClass: String, CaseIterable, Sendable {
    case tpv = "TPV"
    case sky = "SKY"
    case version = "VERSION"
    case device = "DEVICE"
    case devices = "DEVICES"
    case error = "ERROR"
    case watch = "WATCH"
    case poll = "POLL"
    /// A class this client does not use, such as a newer gpsd's: skipped, as the protocol asks.
    case other
    /// Not a JSON object with a class.
    case malformed

    init(message: some RandomAccessCollection<UInt8>) {
        var bytes = message[...]
        while let last = bytes.last, last == 13 || last == 10 || last == 32 { bytes = bytes.dropLast() }
        while let first = bytes.first, first == 32 { bytes = bytes.dropFirst() }
        guard bytes.first == UInt8(ascii: "{"), bytes.last == UInt8(ascii: "}") else {
            self = .malformed
            return
        }
        let key = #""class":""#.utf8
        guard let start = Self.firstIndex(of: key, in: bytes) else {
            self = .malformed
            return
        }
        let rest = bytes[start...]
        guard let end = rest.firstIndex(of: UInt8(ascii: "\"")) else {
            self = .malformed
            return
        }
        let name = rest[..<end]
        self =
            Self.allCases.first { $0 != .other && $0 != .malformed && $0.rawValue.utf8.elementsEqual(name) } ?? .other
    }

    /// Where the bytes right after `key` start, or `nil`.
    private static func firstIndex<Bytes: Collection<UInt8>>(
        of key: String.UTF8View,
        in bytes: Bytes
    ) -> Bytes.Index? {
        var index = bytes.startIndex
        while index != bytes.endIndex {
            if bytes[index...].starts(with: key) { return bytes.index(index, offsetBy: key.count) }
            index = bytes.index(after: index)
        }
        return nil
    }
}
