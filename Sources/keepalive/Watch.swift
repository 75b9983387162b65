import ArgumentParser
import Foundation
import LocationKeepAlive
import UnixSignals

extension KeepAlive {
    /// Continuous fixes until Ctrl-C (exit 0) or, for a replay, the end of the log.
    struct Watch: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print fixes as they arrive.")

        @OptionGroup var source: SourceOptions

        func run() async throws {
            let output = Output(json: source.json)
            let manager = try source.makeManager()
            let failed = await withTaskGroup(of: Bool?.self) { group in
                group.addTask {
                    do {
                        for try await update in manager.updates(source.filter) {
                            switch update {
                            case .location(let location): output.write(location)
                            case .status(let status): output.write(status)
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
