public import KeepAliveCore

/// A location prompt that answers from a script and remembers what it was asked.
///
/// ```swift
/// let prompt = ScriptedAuthorizationPrompt(answers: [.whenInUse, .always])
/// let authorization = LocationAuthorizationManager(application: "app", file: file, prompt: prompt)
/// ```
public final class ScriptedAuthorizationPrompt: AuthorizationPrompt {
    private let state: Locked<(answers: [AuthorizationAnswer?], questions: [AuthorizationRules.Question])>

    /// - Parameter answers: given in order; `nil` plays a user who could not be asked. When the
    ///   script runs out, the prompt is unanswered.
    public init(answers: [AuthorizationAnswer?] = []) { state = Locked((answers, [])) }

    /// The questions asked so far, in order.
    public var questions: [AuthorizationRules.Question] { state.withLock { $0.questions } }

    /// The scripted answer to `question`, and keeps the question.
    public func ask(_ question: AuthorizationRules.Question, application: String) async -> AuthorizationAnswer? {
        state.withLock { state in
            state.questions.append(question)
            return state.answers.isEmpty ? nil : state.answers.removeFirst()
        }
    }
}
