/// Finds NMEA sentences in raw log or serial bytes.
///
/// Lines end at CR or LF (or both). A line whose first non-blank byte is `#` is a comment.
/// Anything before a `$` (binary junk, NUL bytes, a leading space) is passed over, and a
/// line holding two sentences glued together yields both.
public struct NMEAScanner: Sendable {
    /// One thing found in the input.
    public enum Item: Sendable, Hashable {
        /// From `$` to the end of the sentence, line ending excluded.
        case sentence(Range<Int>)
        /// A `#` comment line.
        case comment
        /// A non-empty line, or the part of one before its first `$`, that is not NMEA.
        case junk
    }

    /// The log being scanned.
    public let bytes: [UInt8]
    private var position = 0
    private var pendingSentenceStart: Int?
    private var lineEnd = 0
    /// Whether `bytes` end the input: if not, a last line without its line ending waits for more.
    private let isLast: Bool

    /// Scans the whole input.
    public init(bytes: [UInt8]) { self.init(bytes: bytes, isLast: true) }

    /// Scans one piece of a longer input; the lines not yet ended start at ``unscanned``.
    init(bytes: [UInt8], isLast: Bool) {
        self.bytes = bytes
        self.isLast = isLast
    }

    /// Where the bytes not yet scanned start (a line waiting for its end, in a piece).
    var unscanned: Int { pendingSentenceStart ?? position }

    /// The next item, or `nil` at the end of the input (or of the piece's ended lines).
    public mutating func next() -> Item? {
        if let start = pendingSentenceStart { return sentence(from: start) }
        while position < bytes.count {
            // Skip line endings and blanks between lines.
            let byte = bytes[position]
            if byte == 10 || byte == 13 || byte == 32 || byte == 9 || byte == 0 {
                position += 1
                continue
            }
            lineEnd = position
            while lineEnd < bytes.count && bytes[lineEnd] != 10 && bytes[lineEnd] != 13 { lineEnd += 1 }
            if lineEnd == bytes.count && !isLast { return nil }  // the rest of the line is still to come
            if byte == UInt8(ascii: "#") {
                position = lineEnd
                return .comment
            }
            var dollar = position
            while dollar < lineEnd && bytes[dollar] != UInt8(ascii: "$") { dollar += 1 }
            if dollar > position {
                position = dollar
                if dollar == lineEnd { return .junk }
                pendingSentenceStart = dollar
                return .junk
            }
            return sentence(from: dollar)
        }
        return nil
    }

    private mutating func sentence(from start: Int) -> Item {
        var end = start + 1
        while end < lineEnd && bytes[end] != UInt8(ascii: "$") { end += 1 }
        pendingSentenceStart = end < lineEnd ? end : nil
        position = end
        return .sentence(start..<end)
    }
}
