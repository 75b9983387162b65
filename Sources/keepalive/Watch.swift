import ArgumentParser
import FoundationEssentials
import LocationKeepAlive
import UnixSignals

extension KeepAlive {
    /// Continuous fixes until Ctrl-C (exit 0) or, for a replay, the end of the log.
    struct Watch: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print fixes as they arrive.")

        @OptionGroup var source: SourceOptions

        @Option(help: ArgumentHelp("Exit 0 after this many fixes.", valueName: "n"))
        var count: Int?

        func validate() throws {
            if let count, count < 1 { throw ValidationError("--count must be 1 or more") }
        }

        func run() async throws {
            let output = Output(json: source.json)
            let manager = try source.makeManager()
            let failed = await withTaskGroup(of: Bool?.self) { group in
                group.addTask {
                    do {
                        var fixes = 0
                        for try await update in manager.updates(source.filter) {
                            switch update {
                            case .location(let location):
                                output.write(location)
                                fixes += 1
                                if fixes == count { return false }
                            case .status(let status):
                                output.write(status)
                            }
                        }
                        return false
                    } catch {
                        output.write(error: error)
                        return true
                    }
                }
                group.addTask {
                    for await _ in await UnixSignalsSequence(trapping: .sigint, .sigterm) { return false }
                    return nil
                }
                let first = await group.next() ?? nil
                group.cancelAll()
                return first ?? false
            }
            if failed { throw ExitCode.failure }
        }
    }
}
