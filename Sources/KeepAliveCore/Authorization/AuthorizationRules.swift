/// CoreLocation's rules for authorization requests, as pure functions.
public enum AuthorizationRules {
    /// The kind of request an app makes.
    public enum Request: String, Sendable, Hashable, CaseIterable {
        /// `requestWhenInUseAuthorization()`.
        case whenInUse = "when-in-use"
        /// `requestAlwaysAuthorization()`.
        case always
    }

    /// What the user is asked, and which answers the dialog offers.
    public enum Question: Sendable, Hashable {
        /// First request for when in use: allow while using, allow once, don't allow.
        case whenInUse
        /// First request for always: always, while using, once, don't allow.
        case always
        /// The one-time upgrade from when in use: change to always, or keep while using.
        case upgradeToAlways

        /// The answers the dialog offers.
        public var choices: [AuthorizationAnswer] {
            switch self {
            case .whenInUse: [.whenInUse, .once, .deny]
            case .always: [.always, .whenInUse, .once, .deny]
            case .upgradeToAlways: [.always, .whenInUse]
            }
        }
    }

    /// Whether a request prompts, given what is stored: only from not determined, and the
    /// upgrade prompt from when in use exactly once. Anything else changes nothing.
    public static func question(for request: Request, record: AuthorizationRecord) -> Question? {
        switch (request, record.status) {
        case (_, .notDetermined): request == .always ? .always : .whenInUse
        case (.always, .whenInUse) where !record.alwaysPromptShown && !record.isTemporary: .upgradeToAlways
        default: nil
        }
    }

    /// The record after the user answered `question`.
    public static func apply(
        _ answer: AuthorizationAnswer,
        to question: Question,
        record: AuthorizationRecord
    )
        -> AuthorizationRecord
    {
        var updated = record
        let answer = question.choices.contains(answer) ? answer : (question == .upgradeToAlways ? .whenInUse : .deny)
        switch answer {
        case .always: updated.status = .always
        case .whenInUse: updated.status = .whenInUse
        case .once:
            updated.status = .whenInUse
            updated.isTemporary = true
        case .deny: updated.status = .denied
        }
        if answer != .once { updated.isTemporary = false }
        if question == .upgradeToAlways || (question == .always && answer == .whenInUse) {
            updated.alwaysPromptShown = true
        }
        return updated
    }
}

/// What the user chose in a location prompt.
public enum AuthorizationAnswer: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Allow always: in the background too.
    case always
    /// Allow while the app is in use.
    case whenInUse = "when-in-use"
    /// Allow once: when in use until the app leaves the foreground for a while or terminates.
    case once
    /// Do not allow.
    case deny

    /// The name the tool prints.
    public var description: String { rawValue }
}

/// Asks the user for location access. The CLI asks on a terminal; tests script the answers.
public protocol AuthorizationPrompt: Sendable {
    /// The user's answer, or `nil` if nobody could be asked.
    func ask(_ question: AuthorizationRules.Question, application: String) async -> AuthorizationAnswer?
}

/// A prompt that never reaches anyone: requests leave the status as it is.
public struct NoAuthorizationPrompt: AuthorizationPrompt {
    /// A prompt that never answers (a service has no user).
    public init() {}
    /// Always `nil`: nobody answers.
    public func ask(_ question: AuthorizationRules.Question, application: String) async -> AuthorizationAnswer? { nil }
}
