import ArgumentParser
import FoundationEssentials
import KeepAliveCore
import KeepAliveMonitoring

extension KeepAlive {
    /// Regions, significant changes and visits over gpsd or a replay, one line per event.
    struct Monitor: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print region, significant-change and visit events as fixes decide them.",
            discussion: """
                The conditions file is a JSON object of identifiers, for example:
                {"home": {"type": "circle", "latitude": 52.3731, "longitude": 4.8922, "radius": 150},
                 "moves": {"type": "significant-change"}, "visits": {"type": "visit"},
                 "park": {"type": "polygon", "vertices": [{"latitude": 52.35, "longitude": 4.86}, ...]}}
                With gpsd, the watch is left while the device is stationary and one fix is asked for
                every 5 minutes; a replay is watched throughout. The filter options do not apply:
                the monitor's own rules decide which fixes count.
                """
        )

        @OptionGroup var source: SourceOptions

        @Option(help: ArgumentHelp("The conditions to monitor: a JSON object of identifiers.", valueName: "file"))
        var conditions: String

        @Option(
            help: ArgumentHelp(
                "Keep the monitor in this file: states and last events survive a restart (the conditions file replaces its conditions).",
                valueName: "file"
            )
        )
        var state: String?

        @Flag(help: "Start every condition as unsatisfied (no event until one is entered), instead of unknown.")
        var assumeOutside = false

        func run() async throws {
            let interrupts = await Interrupts.trap()
            let output = Output(json: source.json)
            let monitor: LocationMonitor
            do {
                let file = URL(fileURLWithPath: conditions)
                let wanted = try Self.readConditions(from: file)
                monitor = try LocationMonitor(named: "keepalive", file: state.map { URL(fileURLWithPath: $0) })
                do {
                    try monitor.update(to: wanted, assuming: assumeOutside ? .unsatisfied : .unknown)
                } catch {
                    guard error.code == .invalidCondition else { throw error }
                    throw ConditionsFileError("the conditions file \(file.path): \(error.message)")
                }
            } catch {
                output.write(error: error)
                throw ExitCode.failure
            }
            let manager = try source.makeManager()
            let ending = await withTaskGroup(of: Bool?.self) { group in
                group.addTask {
                    do {
                        try await monitor.monitor(manager) { output.write($0) }  // a replay is never paused on
                        return true
                    } catch {
                        output.write(error: error)
                        return false
                    }
                }
                group.addTask { await interrupts.stopRequested() ? true : nil }
                let first = await group.next() ?? nil
                group.cancelAll()
                return first ?? true
            }
            guard ending else { throw ExitCode.failure }
        }

        /// The conditions of `file` (the monitor checks each as it adds them); a clear error
        /// naming the file otherwise.
        static func readConditions(from file: URL) throws -> [String: MonitorCondition] {
            let data: Data
            do {
                data = try Data(contentsOf: file)
            } catch {
                throw ConditionsFileError("cannot read the conditions file \(file.path): \(error.fileErrorText)")
            }
            do {
                return try JSONDecoder().decode([String: MonitorCondition].self, from: data)
            } catch {
                throw ConditionsFileError(
                    "the conditions file \(file.path) is not a JSON object of conditions (\(error)); see `keepalive monitor --help`"
                )
            }
        }
    }
}

/// A conditions file that cannot be used: what is wrong, naming the file.
private struct ConditionsFileError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
