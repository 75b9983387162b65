import ArgumentParser
import KeepAliveCore

/// The host's rules, shared by `run` and `host`: a named policy, with its budget and grace
/// overridden if asked. Without `--policy`, the command's own default.
struct PolicyOptions: ParsableArguments {
    @Option(
        help:
            "Host rules, unlimited for run and ios13 for host unless given."
    )
    var policy: Parsed<ExecutionProfile>?

    @Option(help: ArgumentHelp("Override the policy's background time.", valueName: "duration"))
    var budget: Parsed<Duration>?

    @Option(
        help: ArgumentHelp("Override the grace after audio stops or a location request ends.", valueName: "duration")
    )
    var grace: Parsed<Duration>?

    func validate() throws {
        try DriverParsing.check(budget: budget, grace: grace)
    }

    /// The rules, with `fallback` when no policy was named.
    func profile(default fallback: ExecutionProfile) -> ExecutionProfile {
        DriverParsing.profile(policy?.value ?? fallback, budget: budget?.value, grace: grace?.value)
    }
}

/// What `run`, `host` and `simulate` share: the host's rules with their overrides, and the
/// hybrid driver's options. Each option is read once, typed, by ArgumentParser; what is left
/// here are the rules that tie options together.
enum DriverParsing {
    /// A budget must be positive, a grace not negative.
    static func check(budget: Parsed<Duration>?, grace: Parsed<Duration>?) throws {
        if let budget, budget.value <= .zero {
            throw ValidationError("--budget must be a positive duration such as 30s or 3m, not '\(budget.text)'")
        }
        if let grace, grace.value < .zero {
            throw ValidationError("--grace must be a duration such as 1s or 10s, not '\(grace.text)'")
        }
    }

    /// A profile, with its budget and grace overridden if asked (a custom profile).
    static func profile(_ base: ExecutionProfile, budget: Duration?, grace: Duration? = nil) -> ExecutionProfile {
        var profile = base
        if let budget {
            profile.name = "custom"
            profile.backgroundBudget = budget
        }
        if let grace {
            profile.name = "custom"
            profile.audioGrace = grace
            profile.locationGrace = grace
        }
        return profile
    }

    /// The hybrid driver's options; the poll timeout is kept under the interval.
    static func hybrid(
        interval: Duration,
        pulse: Duration,
        callbackInterval: Duration = .seconds(30)
    ) throws -> HybridKeepAliveMachine.Options {
        var options = HybridKeepAliveMachine.Options()
        options.interval = interval
        options.pulseLength = pulse
        options.callbackInterval = callbackInterval
        options.pollTimeout = min(options.pollTimeout, interval / 2)
        do { try options.validate() } catch { throw ValidationError("\(error)") }
        return options
    }
}
