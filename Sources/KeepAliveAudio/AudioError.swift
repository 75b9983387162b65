public import KeepAliveCore

/// Why silent audio could not play. Never fatal: the keep-alive driver falls back and says so.
public struct AudioError: Error, Sendable, Hashable, DescribedError {
    /// Which kind of failure.
    public struct Code: Sendable, Hashable {
        private enum Value: Sendable, Hashable { case cannotOpen, deviceLost, cannotWrite }
        private let value: Value
        /// The device is missing, busy, or refused the format.
        public static let cannotOpen = Code(value: .cannotOpen)
        /// The device went away while playing.
        public static let deviceLost = Code(value: .deviceLost)
        /// A WAV file could not be written.
        public static let cannotWrite = Code(value: .cannotWrite)
    }

    /// Which kind of failure.
    public var code: Code
    /// What happened, naming the device, and what to do.
    public var message: String

    /// An error of `code` saying `message`.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }

    static func cannotOpen(device: String, reason: String) -> AudioError {
        AudioError(
            .cannotOpen,
            "cannot open audio device '\(device)' (\(reason)): check the name (aplay -L), that nothing holds it, "
                + "or use --audio-device null where there is no sound card"
        )
    }

    static func deviceLost(device: String, reason: String) -> AudioError {
        AudioError(.deviceLost, "audio device '\(device)' stopped playing (\(reason))")
    }
}
