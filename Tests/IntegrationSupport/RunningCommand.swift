import Foundation
package import Subprocess
import SystemPackage

/// A command running while the test talks to it: its output lines as they come, and signals.
package struct RunningCommand {
    package let lines: GatedGPSD.Lines
    package let execution: Execution<NoInput, SequenceOutput, FileDescriptorOutput>

    /// The next line, or `nil` at the end of the output.
    package func nextLine() async throws -> String? { try await lines.next() }

    package func send(_ signal: Signal) throws { try execution.send(signal: signal) }

    /// Starts the command, runs `body`, and makes sure it is stopped afterwards. When it ends
    /// other than by exiting 0, the end of its standard error is printed: why a service the
    /// test expected to run exited is then in the test's output.
    package static func run<R: Sendable>(
        _ path: String,
        _ arguments: [String],
        environment: [String: String] = [:],
        _ body: (RunningCommand) async throws -> R
    ) async throws -> (value: R, status: TerminationStatus) {
        let configuration = Configuration(
            executable: .path(FilePath(path)),
            arguments: Arguments(arguments),
            environment: .inherit.updating(
                Dictionary(uniqueKeysWithValues: environment.map { (Environment.Key(stringLiteral: $0.key), $0.value) })
            ),
            platformOptions: isolatedOptions()
        )
        let errors = FileManager.default.temporaryDirectory.appendingPathComponent("running-command-\(UUID().uuidString).err")
        defer { try? FileManager.default.removeItem(at: errors) }
        let errorFile = try FileDescriptor.open(
            FilePath(errors.path), .writeOnly, options: [.create, .truncate], permissions: .ownerReadWrite
        )
        let result = try await Subprocess.run(
            configuration, input: .none, output: .sequence, error: .fileDescriptor(errorFile, closeAfterSpawningProcess: true)
        ) {
            execution in
            let command = RunningCommand(
                lines: GatedGPSD.Lines(execution.standardOutput.strings().makeAsyncIterator()),
                execution: execution
            )
            do {
                let value = try await body(command)
                while try await command.nextLine() != nil {}  // to the end: the body stopped it
                return value
            } catch {
                await execution.teardown(using: [
                    .gracefulShutDown(toProcessGroup: true, allowedDurationToNextStep: .seconds(1))
                ])
                throw error
            }
        }
        if result.terminationStatus != .exited(0) {
            let said = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
            let tail = said.split(separator: "\n").suffix(20).joined(separator: "\n")
            print("\(FilePath(path).lastComponent?.string ?? path) \(arguments.first ?? "") ended \(result.terminationStatus); its standard error ended:\n\(tail)")
        }
        return (result.closureResult, result.terminationStatus)
    }
}
