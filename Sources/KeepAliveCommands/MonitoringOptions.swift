import ArgumentParser
import FoundationEssentials
import KeepAliveCore
import KeepAliveMonitoring

/// The monitoring strategy's options, shared by `run` and `simulate`: the conditions file, an
/// OwnTracks waypoints file, and the state a new condition starts in.
struct MonitoringOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Monitoring: the conditions, a JSON object of identifiers (see `keepalive monitor --help`).",
            valueName: "file"
        )
    )
    var conditions: String?

    @Option(
        help: ArgumentHelp(
            "Monitoring: regions from an OwnTracks waypoints file ({\"_type\": \"waypoints\", ...}), each told to OwnTracks destinations as transitions.",
            valueName: "file"
        )
    )
    var waypoints: String?

    @Flag(
        name: .customLong("assume-outside"),
        inversion: .prefixedNo,
        help: "Monitoring: a new condition starts unsatisfied (no event until entered), instead of unknown."
    )
    var assumeOutside = false

    /// The state a new condition starts in.
    var assuming: MonitorState { assumeOutside ? .unsatisfied : .unknown }

    /// Whether conditions were given (`--conditions`, `--waypoints` or both).
    var isGiven: Bool { conditions != nil || waypoints != nil }

    /// Checks that the options go with `strategy`, and that `--conditions` and `--waypoints` name
    /// files; `requirement` says what the monitoring strategy needs (`nil`: it may start without
    /// conditions).
    func validate(for strategy: KeepAliveStrategyKind, needs requirement: String? = "--conditions FILE or --waypoints FILE") throws {
        if strategy == .monitoring {
            if let requirement, !isGiven { throw ValidationError("--strategy monitoring needs \(requirement)") }
            if conditions?.isEmpty == true { throw ValidationError("--conditions needs a file") }
            if waypoints?.isEmpty == true { throw ValidationError("--waypoints needs a file") }
        } else if isGiven || assumeOutside {
            throw ValidationError("--conditions, --waypoints and --assume-outside go with --strategy monitoring")
        }
    }

    /// The conditions of the files, by identifier (none without `--conditions` or `--waypoints`).
    /// Reading waypoints takes the journal commands, where the OwnTracks messages are.
    func read() throws -> [String: MonitorCondition] {
        var all: [String: MonitorCondition] = [:]
        if let conditions { all = try KeepAlive.Monitor.readConditions(from: URL(fileURLWithPath: conditions)) }
        if let waypoints {
            for (identifier, condition) in try JournalLink.required().conditions(fromWaypoints: waypoints) {
                guard all.updateValue(condition, forKey: identifier) == nil else {
                    throw ValidationError("--waypoints \(waypoints): the region id \(identifier) is a condition of --conditions too")
                }
            }
        }
        return all
    }
}
