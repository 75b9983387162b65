/// Why authorization could not be read, changed or asked for, naming the file and what to do.
public struct AuthorizationError: Error, Sendable, Hashable, DescribedError {
    /// Which kind of failure.
    public struct Code: Sendable, Hashable {
        private enum Value: Sendable, Hashable {
            case damagedFile, unreadableFile, futureVersion, writeFailed, restricted, noAnswer
        }
        private let value: Value
        /// The file is not valid JSON of the expected shape (truncated, garbage, wrong types).
        public static let damagedFile = Code(value: .damagedFile)
        /// The file exists but cannot be read (permissions, a directory in its place).
        public static let unreadableFile = Code(value: .unreadableFile)
        /// The file was written by a newer version of this software.
        public static let futureVersion = Code(value: .futureVersion)
        /// The new status could not be saved (read-only directory, disk full).
        public static let writeFailed = Code(value: .writeFailed)
        /// The system policy restricts this application; it cannot change that itself.
        public static let restricted = Code(value: .restricted)
        /// Nobody answered the prompt (no terminal, no answer given).
        public static let noAnswer = Code(value: .noAnswer)
    }

    /// Which kind of failure.
    public var code: Code
    /// What happened, naming the file, and what to do.
    public var message: String

    /// An error of `code` saying `message`.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
