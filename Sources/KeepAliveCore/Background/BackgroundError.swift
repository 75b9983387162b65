/// Why a background capability could not be used. Never fatal: the caller falls back.
public struct BackgroundError: Error, Sendable, Hashable, DescribedError {
    /// Which kind of failure.
    public struct Code: Sendable, Hashable {
        private enum Value: Sendable, Hashable { case audioModeMissing, locationModeMissing, notRunning, notAuthorized }
        private let value: Value
        /// Audio in the background without the audio background mode.
        public static let audioModeMissing = Code(value: .audioModeMissing)
        /// Location in the background without the location background mode.
        public static let locationModeMissing = Code(value: .locationModeMissing)
        /// The app's code is not running (suspended or terminated).
        public static let notRunning = Code(value: .notRunning)
        /// Location is not authorized (not determined, restricted or denied).
        public static let notAuthorized = Code(value: .notAuthorized)
    }

    /// Which kind of failure.
    public var code: Code
    /// What happened and what to do.
    public var message: String

    /// An error of `code` saying `message`.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }

    static let audioModeMissing = BackgroundError(
        .audioModeMissing,
        "play failed: turn on the audio background mode (BackgroundModes.audio)"
    )
    static let locationModeMissing = BackgroundError(
        .locationModeMissing,
        "background location failed: turn on the location background mode (BackgroundModes.location)"
    )
    static let notRunning = BackgroundError(.notRunning, "the app is not running (suspended or terminated)")
    static func notAuthorized(_ status: LocationAuthorization) -> BackgroundError {
        BackgroundError(.notAuthorized, "location failed: authorization is \(status); it needs when-in-use or always")
    }
}
