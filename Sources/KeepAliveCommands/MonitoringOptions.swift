import ArgumentParser
import FoundationEssentials
import KeepAliveCore
import KeepAliveMonitoring

/// The monitoring strategy's options, shared by `run` and `simulate`: the conditions file and
/// the state a new condition starts in.
struct MonitoringOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Monitoring: the conditions, a JSON object of identifiers (see `keepalive monitor --help`).",
            valueName: "file"
        )
    )
    var conditions: String?

    @Flag(
        name: .customLong("assume-outside"),
        help: "Monitoring: a new condition starts unsatisfied (no event until entered), instead of unknown."
    )
    var assumeOutside = false

    /// The state a new condition starts in.
    var assuming: MonitorState { assumeOutside ? .unsatisfied : .unknown }

    /// Checks that the options go with `strategy`, and that `--conditions` names a file.
    func validate(for strategy: String, needs requirement: String = "--conditions FILE") throws {
        if strategy == KeepAliveStrategyKind.monitoring.rawValue {
            guard let conditions else { throw ValidationError("--strategy monitoring needs \(requirement)") }
            if conditions.isEmpty { throw ValidationError("--conditions needs a file") }
        } else if conditions != nil || assumeOutside {
            throw ValidationError("--conditions and --assume-outside go with --strategy monitoring")
        }
    }

    /// The conditions of the file, by identifier (none without `--conditions`).
    func read() throws -> [String: MonitorCondition] {
        guard let conditions else { return [:] }
        return try KeepAlive.Monitor.readConditions(from: URL(fileURLWithPath: conditions))
    }
}
