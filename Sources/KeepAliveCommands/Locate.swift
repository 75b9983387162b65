import ArgumentParser
import FoundationEssentials
import KeepAliveCore

extension KeepAlive {
    /// One fix, then exit: 0 with the fix, 1 with a message when none came in time.
    struct Locate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print one fix and exit.")

        @OptionGroup var source: SourceOptions

        @Option(help: ArgumentHelp("Give up after this many seconds.", valueName: "s"))
        var timeout: Double = 30

        func validate() throws {
            guard timeout > 0, timeout.isFinite else {
                throw ValidationError("--timeout must be a positive number of seconds")
            }
        }

        func run() async throws {
            let output = Output(json: source.json)
            let manager = try source.makeManager()
            do {
                let location = try await manager.requestLocation(
                    desiredAccuracy: source.accuracy,
                    maximumAge: source.maximumAge,
                    timeout: .milliseconds(Int64(timeout * 1000))
                )
                output.write(location)
            } catch {
                output.write(error: error)
                throw ExitCode.failure
            }
        }
    }
}
