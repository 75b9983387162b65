/// Why one NMEA sentence was not decoded. The sentence is skipped and counted; decoding goes on.
public struct NMEAError: Error, Sendable, Hashable, DescribedError {
    /// Which kind of failure.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Value: Sendable, Hashable { case missingChecksum, badChecksum, malformed }
        private let value: Value

        /// The sentence has no `*hh` checksum (often a truncated line).
        public static let missingChecksum = Code(value: .missingChecksum)
        /// The checksum does not match the sentence (corrupted in transit).
        public static let badChecksum = Code(value: .badChecksum)
        /// The sentence's address or fields cannot be read.
        public static let malformed = Code(value: .malformed)

        /// The code in words.
        public var description: String {
            switch value {
            case .missingChecksum: "missing checksum"
            case .badChecksum: "bad checksum"
            case .malformed: "malformed sentence"
            }
        }
    }

    /// Which kind of failure.
    public var code: Code

    /// An error of `code`.
    public init(_ code: Code) { self.code = code }

    /// `NMEA: ` and the code in words.
    public var description: String { "NMEA: \(code)" }
}
