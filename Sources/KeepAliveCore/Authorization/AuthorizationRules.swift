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

/// Asks the user for location access: what ``LocationAuthorizationManager``'s requests call
/// when CoreLocation would show its dialog. The CLI asks on a terminal; a program that decides
/// up front answers with ``FixedAuthorizationPrompt``; a desktop app would show a dialog.
///
/// ```swift
/// struct DialogPrompt: AuthorizationPrompt {
///     func ask(_ question: AuthorizationRules.Question, application: String) async -> AuthorizationAnswer? {
///         await showDialog(offering: question.choices)  // nil if nobody was there to answer
///     }
/// }
/// ```
public protocol AuthorizationPrompt: Sendable {
    /// The user's answer, one of `question.choices`, or `nil` if nobody could be asked (the
    /// status then stays as it was).
    func ask(_ question: AuthorizationRules.Question, application: String) async -> AuthorizationAnswer?
}

/// A prompt that gives one answer to every question, for a program (or its tests) that decides
/// up front: `LocationAuthorizationManager(application: "tracker", prompt: FixedAuthorizationPrompt(.always))`.
///
/// When the dialog does not offer the answer, it gives the nearest one it does: while using
/// (`always` to a when-in-use request, `once` or `deny` to the upgrade to always, which offers
/// only always and while using).
public struct FixedAuthorizationPrompt: AuthorizationPrompt {
    /// The answer given.
    public let answer: AuthorizationAnswer

    /// A prompt that always answers `answer`.
    public init(_ answer: AuthorizationAnswer) { self.answer = answer }

    /// ``answer``, or while using when the question does not offer it.
    public func ask(_ question: AuthorizationRules.Question, application: String) async -> AuthorizationAnswer? {
        question.choices.contains(answer) ? answer : .whenInUse
    }
}

/// A prompt that never reaches anyone: requests leave the status as it is.
public struct NoAuthorizationPrompt: AuthorizationPrompt {
    /// A prompt that never answers (a service has no user).
    public init() {}
    /// Always `nil`: nobody answers.
    public func ask(_ question: AuthorizationRules.Question, application: String) async -> AuthorizationAnswer? { nil }
}
