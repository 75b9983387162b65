import Glibc
public import KeepAliveCore

/// Why the host could not do something, in words that say what to do.
public struct HostError: Error, Sendable, Hashable, DescribedError {
    /// Which kind of failure.
    public struct Code: Sendable, Hashable {
        private enum Value: Sendable, Hashable {
            case freezerUnavailable, freezeFailed, launchFailed, unknownApp, notPermitted, badRequest
            case socketInUse, socketFailed, hostUnreachable
        }
        private let value: Value
        /// The asked-for freezer cannot be used here (no such hierarchy, not writable).
        public static let freezerUnavailable = Code(value: .freezerUnavailable)
        /// Freezing or thawing did not complete.
        public static let freezeFailed = Code(value: .freezeFailed)
        /// The app's command could not be started.
        public static let launchFailed = Code(value: .launchFailed)
        /// No app by that name runs under the host.
        public static let unknownApp = Code(value: .unknownApp)
        /// The caller may not ask that (another app's request, or a lifecycle command from another user).
        public static let notPermitted = Code(value: .notPermitted)
        /// A control message that is not the protocol.
        public static let badRequest = Code(value: .badRequest)
        /// Another host answers on the socket.
        public static let socketInUse = Code(value: .socketInUse)
        /// The control socket could not be made or used.
        public static let socketFailed = Code(value: .socketFailed)
        /// No host answers on the socket.
        public static let hostUnreachable = Code(value: .hostUnreachable)
    }

    /// Which kind of failure.
    public var code: Code
    /// What happened and what to do, in words.
    public var message: String

    /// An error of `code` saying `message`.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }
}

extension HostError {
    /// A failed system call's error: `context`, then what `errno` says of it.
    package static func system(_ context: String, code: Code = .freezeFailed) -> HostError {
        HostError(code, "\(context): \(String(cString: strerror(errno)).lowercased())")
    }
}
