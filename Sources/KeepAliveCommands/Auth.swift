import ArgumentParser
import FoundationEssentials
import KeepAliveCore

extension KeepAlive {
    /// Reads and manages the authorization store.
    struct Auth: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show, request, set or reset an application's location authorization.",
            subcommands: [Status.self, Request.self, Set.self, Reset.self]
        )

        /// `keepalive auth` alone is a usage error (64), not a silent help page.
        func run() async throws {
            throw ValidationError("choose what to do: status, request, set or reset")
        }

        struct Status: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Print the authorization and where it is kept.")
            @OptionGroup var options: AuthOptions
            @Flag(help: "One JSON object.") var json = false

            func run() throws {
                let manager = options.makeManager()
                print(describe(manager.snapshot, file: manager.file, json: json))
                if let problem = manager.snapshot.problem {
                    Console.error("keepalive: \(problem)\n")
                    throw ExitCode.failure
                }
            }
        }

        struct Request: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Ask for when-in-use or always access, as an app would (prompts on a terminal)."
            )
            @Argument(help: "when-in-use or always") var kind: String
            @Option(help: "Answer without a terminal: always, when-in-use, once, deny.") var answer: String?
            @OptionGroup var options: AuthOptions

            func validate() throws {
                guard AuthorizationRules.Request(rawValue: kind) != nil else {
                    throw ValidationError("request when-in-use or always, not '\(kind)'")
                }
                if let answer, AuthorizationAnswer(rawValue: answer) == nil {
                    throw ValidationError("--answer must be always, when-in-use, once or deny, not '\(answer)'")
                }
            }

            func run() async throws {
                let manager = options.makeManager(
                    prompt: TerminalPrompt(answer: answer.flatMap(AuthorizationAnswer.init))
                )
                do {
                    let status =
                        kind == "always"
                        ? try await manager.requestAlwaysAuthorization()
                        : try await manager.requestWhenInUseAuthorization()
                    print("\(options.app): \(status)")
                } catch {
                    Console.error("keepalive: \(error)\n")
                    throw ExitCode.failure
                }
            }
        }

        struct Set: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Set the status, as the user would in Settings.")
            @Argument(help: "not-determined, denied, when-in-use or always") var status: String
            @Option(help: "full or reduced") var accuracy: String?
            @OptionGroup var options: AuthOptions

            func validate() throws {
                guard let parsed = LocationAuthorization(rawValue: status) else {
                    throw ValidationError(
                        "status must be not-determined, denied, when-in-use or always, not '\(status)'"
                    )
                }
                guard parsed != .restricted else {
                    throw ValidationError("restricted comes from the system policy (--policy-file), not from auth set")
                }
                if let accuracy, LocationAccuracyAuthorization(rawValue: accuracy) == nil {
                    throw ValidationError("--accuracy must be full or reduced, not '\(accuracy)'")
                }
            }

            func run() throws {
                let manager = options.makeManager()
                do {
                    try manager.setStatus(
                        LocationAuthorization(rawValue: status)!,
                        accuracy: accuracy.flatMap(LocationAccuracyAuthorization.init)
                    )
                    print("\(options.app): \(manager.status)")
                } catch {
                    Console.error("keepalive: \(error)\n")
                    throw ExitCode.failure
                }
            }
        }

        struct Reset: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Forget the decision (removes the file, even a damaged one)."
            )
            @OptionGroup var options: AuthOptions

            func run() throws {
                let manager = options.makeManager()
                do {
                    try manager.reset()
                    print("\(options.app): \(manager.status)")
                } catch {
                    Console.error("keepalive: \(error)\n")
                    throw ExitCode.failure
                }
            }
        }
    }
}

func describe(_ snapshot: AuthorizationSnapshot, file: AuthorizationFile, json: Bool) -> String {
    if json {
        let object = JSONLine([
            "accuracy": .string(snapshot.accuracy.rawValue), "alwaysPromptShown": .bool(snapshot.alwaysPromptShown),
            "application": .string(snapshot.application), "file": .string(file.url.path),
            "locationServicesEnabled": .bool(snapshot.locationServicesEnabled),
            "problem": snapshot.problem.map { .string($0.message) } ?? .null,
            "status": .string(snapshot.status.rawValue), "temporary": .bool(snapshot.isTemporary),
        ])
        return String(decoding: object.bytes.dropLast(), as: UTF8.self)
    }
    var lines = [
        "\(snapshot.application): \(snapshot.status)\(snapshot.isTemporary ? " (allowed once)" : ""), \(snapshot.accuracy) accuracy",
        "location services: \(snapshot.locationServicesEnabled ? "on" : "off")",
        "file: \(file.url.path)",
    ]
    if let problem = snapshot.problem { lines.append("problem: \(problem)") }
    return lines.joined(separator: "\n")
}
