import ArgumentParser
import KeepAliveCore

/// The host's rules, shared by `run` and `host`: a named policy, with its budget and grace
/// overridden if asked. Without `--policy`, the command's own default.
struct PolicyOptions: ParsableArguments {
    @Option(
        help:
            "Host rules: ios13, ios12, android, ubuntu-touch or unlimited (default: unlimited for run, ios13 for host)."
    )
    var policy: String?

    @Option(help: ArgumentHelp("Override the policy's background time.", valueName: "duration"))
    var budget: String?

    @Option(
        help: ArgumentHelp("Override the grace after audio stops or a location request ends.", valueName: "duration")
    )
    var grace: String?

    /// The rules, with `fallback` when no policy was named.
    func profile(default fallback: String) throws -> ExecutionProfile {
        try DriverParsing.profile(named: policy ?? fallback, option: "--policy", budget: budget, grace: grace)
    }
}

/// Parsing shared by `run` and `simulate`: the host profile and the hybrid driver's options.
enum DriverParsing {
    /// A named profile, with its budget overridden if asked (a custom profile).
    static func profile(
        named name: String,
        option: String,
        budget: String?,
        grace: String? = nil
    ) throws -> ExecutionProfile {
        guard var profile = ExecutionProfile.named(name) else {
            let names = ExecutionProfile.all.map(\.name).joined(separator: ", ")
            throw ValidationError("\(option) must be one of \(names), not '\(name)'")
        }
        if let budget {
            guard let value = Duration(parsing: budget), value > .zero else {
                throw ValidationError("--budget must be a positive duration such as 30s or 3m, not '\(budget)'")
            }
            profile.name = "custom"
            profile.backgroundBudget = value
        }
        if let grace {
            guard let value = Duration(parsing: grace), value >= .zero else {
                throw ValidationError("--grace must be a duration such as 1s or 10s, not '\(grace)'")
            }
            profile.name = "custom"
            profile.audioGrace = value
            profile.locationGrace = value
        }
        return profile
    }

    static func strategy(_ name: String) throws -> KeepAliveStrategyKind {
        guard let kind = KeepAliveStrategyKind(rawValue: name) else {
            throw ValidationError(
                "--strategy must be one of \(KeepAliveStrategyKind.allCases.map(\.rawValue).joined(separator: ", ")), not '\(name)'"
            )
        }
        return kind
    }

    /// The hybrid driver's options; the poll timeout is kept under the interval.
    static func hybrid(
        interval: String,
        pulse: String,
        callbackInterval: String = "30s"
    ) throws
        -> HybridKeepAliveMachine.Options
    {
        guard let intervalValue = Duration(parsing: interval), let pulseValue = Duration(parsing: pulse),
            let callbackValue = Duration(parsing: callbackInterval)
        else {
            throw ValidationError("--interval, --pulse and --callback-interval take durations such as 10s, 200ms, 30s")
        }
        var options = HybridKeepAliveMachine.Options()
        options.interval = intervalValue
        options.pulseLength = pulseValue
        options.callbackInterval = callbackValue
        options.pollTimeout = min(options.pollTimeout, intervalValue / 2)
        do { try options.validate() } catch { throw ValidationError("\(error)") }
        return options
    }
}
