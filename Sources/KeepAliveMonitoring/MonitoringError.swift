public import KeepAliveCore

/// Why a monitor refused a condition or could not load or save its file, with what to do.
public struct MonitoringError: Error, Sendable, Hashable, DescribedError {
    /// Which kind of failure: match on it; the message says the rest.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Value: Sendable, Hashable {
            case invalidCondition, tooManyConditions, damagedFile, fileUnwritable
        }
        private let value: Value

        /// A condition that cannot be monitored as given: a negative radius, a vertex off the globe.
        public static let invalidCondition = Code(value: .invalidCondition)
        /// More conditions than the monitor takes.
        public static let tooManyConditions = Code(value: .tooManyConditions)
        /// The monitor's file is not one this library wrote; it is left as it is.
        public static let damagedFile = Code(value: .damagedFile)
        /// The monitor's file could not be written; the change was not made.
        public static let fileUnwritable = Code(value: .fileUnwritable)

        /// The code's name.
        public var description: String {
            switch value {
            case .invalidCondition: "invalid condition"
            case .tooManyConditions: "too many conditions"
            case .damagedFile: "damaged file"
            case .fileUnwritable: "file unwritable"
            }
        }
    }

    /// Which kind of failure.
    public var code: Code
    /// A sentence for a person: what happened and what to do.
    public var message: String

    /// An error of `code` saying `message`.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }

    static func invalidCondition(_ message: String) -> MonitoringError { MonitoringError(.invalidCondition, message) }
}
