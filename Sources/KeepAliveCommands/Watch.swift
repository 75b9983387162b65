import ArgumentParser
import FoundationEssentials
import KeepAliveCore

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
            let interrupts = await Interrupts.trap()
            let output = Output(json: source.json)
            let manager = try source.makeManager()
            let (reachedCount, reached) = AsyncStream.makeStream(of: Void.self)
            let printed = FixCount(limit: count)
            let ending = await withTaskGroup(of: Ending?.self) { group in
                group.addTask {
                    do {
                        // On the source's thread: one wake-up per fix, like a C client.
                        try await manager.updates(source.filter) { update in
                            switch update {
                            case .location(let location):
                                guard let isLast = printed.take() else { return }  // past --count
                                output.write(location)
                                if isLast { reached.yield() }
                            case .status(let status):
                                output.write(status)
                            }
                        }
                        return .finished
                    } catch {
                        output.write(error: error)
                        return .failed
                    }
                }
                group.addTask {
                    for await _ in reachedCount { return .finished }
                    return nil
                }
                group.addTask {
                    await interrupts.stopRequested() ? .stopped : nil
                }
                let first = await group.next() ?? nil
                group.cancelAll()
                reached.finish()
                return first ?? .finished
            }
            switch ending {
            case .failed: throw ExitCode.failure
            case .stopped: output.writeStopped()
            case .finished: break
            }
        }
    }
}

/// Why `watch` ended: the source failed, it ended or printed its `--count`, or a signal stopped it.
private enum Ending: Sendable {
    case failed, finished, stopped
}

/// Fixes printed so far against `--count`, from the source's thread.
private final class FixCount: Sendable {
    private let printed = Locked(0)
    private let limit: Int?

    init(limit: Int?) { self.limit = limit }

    /// Counts one more fix: `nil` when the limit was already reached (do not print it), else
    /// whether this one reaches it.
    func take() -> Bool? {
        printed.withLock { printed in
            guard printed != limit else { return nil }
            printed += 1
            return printed == limit
        }
    }
}
