import ArgumentParser
import Dispatch
import FoundationEssentials
import Glibc
import KeepAliveCore

/// Which application's authorization, and where it is kept.
struct AuthOptions: ParsableArguments {
    @Option(help: "Application identifier whose authorization is used.")
    var app: String = "keepalive"

    @Option(
        name: .customLong("auth-file"),
        help: ArgumentHelp("The authorization file (default: under $XDG_CONFIG_HOME).", valueName: "path")
    )
    var authFile: String?

    @Option(name: .customLong("policy-file"), help: ArgumentHelp("The system location policy.", valueName: "path"))
    var policyFile: String = SystemLocationPolicy.defaultURL.path

    func validate() throws {
        guard !app.isEmpty, !app.contains("/") else {
            throw ValidationError("--app must be a non-empty identifier without '/'")
        }
        if authFile?.isEmpty == true { throw ValidationError("--auth-file needs a path") }
        if policyFile.isEmpty { throw ValidationError("--policy-file needs a path") }
    }

    func makeManager(prompt: any AuthorizationPrompt = NoAuthorizationPrompt()) -> LocationAuthorizationManager {
        LocationAuthorizationManager(
            application: app,
            file: authFile.map { AuthorizationFile(url: URL(fileURLWithPath: $0)) },
            policyURL: URL(fileURLWithPath: policyFile),
            prompt: prompt
        )
    }
}

/// Asks on the terminal, reading off the cooperative thread pool; or answers from a flag.
struct TerminalPrompt: AuthorizationPrompt {
    let answer: AuthorizationAnswer?

    func ask(_ question: AuthorizationRules.Question, application: String) async -> AuthorizationAnswer? {
        if let answer { return await FixedAuthorizationPrompt(answer).ask(question, application: application) }
        guard isatty(STDIN_FILENO) == 1 else { return nil }
        let choices = question.choices.map { $0 == .whenInUse ? "when in use" : $0.rawValue }.joined(separator: " / ")
        let title =
            question == .upgradeToAlways
            ? "Allow \(application) to use your location even when you are not using it?"
            : "Allow \(application) to access your location?"
        while true {
            Console.error("\(title) [\(choices)] ")
            let line = await withCheckedContinuation { continuation in
                DispatchQueue.global().async { continuation.resume(returning: readLine()) }
            }
            guard let line else { return nil }
            let word = line.split(separator: " ", omittingEmptySubsequences: true).joined(separator: "-").lowercased()
            if let answer = AuthorizationAnswer(rawValue: word == "don't-allow" ? "deny" : word),
                question.choices.contains(answer)
            {
                return answer
            }
        }
    }
}
