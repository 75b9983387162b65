import ArgumentParser
import FoundationEssentials
import KeepAliveCore
import KeepAliveMonitoring
import KeepAliveSimulation

extension KeepAlive {
    /// Runs a keep-alive strategy against the background execution model in virtual time.
    struct Simulate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Simulate a keep-alive strategy under a host's background rules, in virtual time.",
            discussion: """
                The app launches in the foreground at time 0; by default it enters the background at once \
                and stays there. A script (--script FILE) lists events instead, one per line: \
                "TIME background|foreground|terminate", "TIME auth STATUS", "TIME gps down|up", with TIME as \
                90s, 10m, 2h (lines starting with # are comments).
                """
        )

        @Option(
            help:
                "Host rules: ios13 gives 30 s of background time, ios12 180 s; android freezes 10 s after leaving the screen, ubuntu-touch after 1.5 s; unlimited never suspends."
        )
        var profile: Parsed<ExecutionProfile> = "ios13"

        @Option(help: ArgumentHelp("Override the profile's background time (custom profile).", valueName: "duration"))
        var budget: Parsed<Duration>?

        @Option(
            help: ArgumentHelp(
                "Override the grace after audio stops or a location request ends.",
                valueName: "duration"
            )
        )
        var grace: Parsed<Duration>?

        @Flag(help: "A custom profile where renewing a background task resets the budget.")
        var renewalResetsBudget = false

        @Option(help: "Location authorization.")
        var auth: Parsed<LocationAuthorization> = "always"

        @Option(
            help:
                "How the app keeps itself alive (monitoring goes with --conditions and --location-log)."
        )
        var strategy: Parsed<KeepAliveStrategyKind> = "background-task"

        @OptionGroup(title: "Monitoring") var monitoring: MonitoringOptions

        @Flag(help: "Print the energy model's table instead: each strategy on each device profile (receiver on, device awake, mWh per hour, hours on battery).")
        var energy = false

        @Option(help: ArgumentHelp("How long to simulate.", valueName: "duration"))
        var duration: Parsed<Duration> = "24h"

        @Option(help: ArgumentHelp("Lifecycle, authorization and gps events at times.", valueName: "file"))
        var script: String?

        @Option(
            help: ArgumentHelp(
                "Declared background modes (audio, location, fetch, processing, none).",
                valueName: "list"
            )
        )
        var modes: Parsed<BackgroundModes> = "audio,location"

        @Option(
            name: .customLong("location-log"),
            help: ArgumentHelp("Hand out the fixes of this NMEA log to location requests.", valueName: "file")
        )
        var locationLog: String?

        @Option(help: ArgumentHelp("Hybrid: time between polls or pulses.", valueName: "duration"))
        var interval: Parsed<Duration> = "10s"

        @Option(help: ArgumentHelp("Hybrid: length of a silent pulse.", valueName: "duration"))
        var pulse: Parsed<Duration> = "200ms"

        @Option(
            name: .customLong("fix-latency"),
            help: ArgumentHelp("How long a location request takes to answer.", valueName: "duration")
        )
        var fixLatency: Parsed<Duration> = "1s"

        @Flag(help: "One JSON object.")
        var json = false

        @Flag(help: "Print every event with its time.")
        var trace = false

        @Option(
            help: ArgumentHelp(
                "Also draw the timeline (states, tasks, polls, pulses, script events) as an SVG file.",
                valueName: "file.svg"
            )
        )
        var plot: String?

        @Option(help: ArgumentHelp("Run the simulation N times and print wall-time figures instead.", valueName: "n"))
        var benchmark: Int?

        /// What ties the options together: each was read, typed, by ArgumentParser.
        func validate() throws {
            try DriverParsing.check(budget: budget, grace: grace)
            if duration.value <= .zero {
                throw ValidationError("--duration must be a positive duration such as 24h or 90m, not '\(duration.text)'")
            }
            if fixLatency.value < .zero {
                throw ValidationError("--fix-latency must be a duration such as 1s or 10ms, not '\(fixLatency.text)'")
            }
            _ = try DriverParsing.hybrid(interval: interval.value, pulse: pulse.value)
            try checkTrack()
            if let benchmark, benchmark < 1 { throw ValidationError("--benchmark must be 1 or more runs") }
            if plot?.isEmpty == true { throw ValidationError("--plot needs a file name, such as day.svg") }
            if plot != nil, benchmark != nil { throw ValidationError("--plot draws one simulation: drop --benchmark") }
        }

        func run() throws {
            if energy { return Console.out(EnergyModel().table()) }
            if let benchmark { return try runBenchmark(benchmark) }
            var simulator = try makeSimulator()
            simulator.recordsTimeline = plot != nil
            var report = simulator.run()
            if let plot, let timeline = report.timeline {
                let title =
                    "\(report.strategy) · \(report.profile) · \(report.authorization) · "
                    + SimulationText.time(report.durationSeconds)
                do {
                    try Data(timeline.svg(title: title).utf8).write(to: URL(fileURLWithPath: plot), options: .atomic)
                } catch {
                    throw ValidationError("--plot: cannot write \(plot): \(error.fileErrorText)")
                }
                report.timeline = nil  // drawn, not printed
            }
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                Console.out(Array(try encoder.encode(report)) + Array("\n".utf8))
            } else {
                print(SimulationText(report).rendered)
            }
        }

        /// Wall time of whole simulated runs: median, min and max, and simulated seconds per wall second.
        func runBenchmark(_ runs: Int) throws {
            let simulator = try makeSimulator()
            let clock = ContinuousClock()
            var times: [Duration] = []
            var report: SimulationReport?
            for _ in 0..<runs {
                let started = clock.now
                report = simulator.run()
                times.append(clock.now - started)
            }
            times.sort()
            let median = times[times.count / 2]
            let simulated = simulator.duration.seconds
            let name =
                "\(simulator.strategy.rawValue) \(simulator.profile.name) \(simulator.authorization.rawValue) \(duration.text)"
            let milliseconds = (median.seconds * 1000).fixed(3)
            let range =
                "min \((times[0].seconds * 1000).fixed(3)), max \((times[times.count - 1].seconds * 1000).fixed(3))"
            let speed = (simulated / median.seconds).fixed(0)
            print(
                "simulate \(name): median \(milliseconds) ms (\(range), \(runs) runs), \(speed) simulated s per wall s, "
                    + "\(report?.wakeups ?? 0) wake-ups"
            )
        }

        /// The simulator the options describe, made once, with its script and track read.
        func makeSimulator() throws -> Simulator {
            var profile = DriverParsing.profile(profile.value, budget: budget?.value, grace: grace?.value)
            if renewalResetsBudget {
                profile.name = "custom"
                profile.renewal = .resetsBudget
            }
            var simulator = Simulator(
                profile: profile,
                authorization: auth.value,
                strategy: strategy.value,
                duration: duration.value,
                script: try readScript(),
                backgroundModes: modes.value,
                locationLatency: fixLatency.value,
                fixes: try readFixes(),
                recordsTrace: trace,
                hybridOptions: try DriverParsing.hybrid(interval: interval.value, pulse: pulse.value)
            )
            simulator.conditions = try readConditions()
            simulator.conditionsAssume = monitoring.assuming
            return simulator
        }

        /// `--script`, read and parsed (the app in the background for ever without one).
        private func readScript() throws -> SimulationScript {
            guard let script else { return .backgroundForever }
            let text: String
            do { text = try String(contentsOfFile: script, encoding: .utf8) } catch {
                throw ValidationError("--script: cannot read \(script): \(error.fileErrorText)")
            }
            do { return try SimulationScript(parsing: text) } catch {
                throw ValidationError("--script \(script): \(error)")
            }
        }

        /// `--location-log` and `--conditions` go with the strategy (the files are read by the run:
        /// the log may be a FIFO that reads only once).
        private func checkTrack() throws {
            try monitoring.validate(for: strategy.value, needs: "--conditions FILE and --location-log FILE (the track)")
            if strategy.value == .monitoring, locationLog == nil {
                throw ValidationError("--strategy monitoring needs --conditions FILE and --location-log FILE (the track)")
            }
        }

        /// `--location-log`'s fixes, to hand out to location requests.
        private func readFixes() throws -> [Location] {
            guard let locationLog else { return [] }
            let fixes: [Location]
            do { fixes = try NMEALog.fixes(in: URL(fileURLWithPath: locationLog)) } catch {
                throw ValidationError("--location-log: \(error)")
            }
            if fixes.isEmpty { throw ValidationError("--location-log \(locationLog) has no fix to hand out") }
            return fixes
        }

        /// `--conditions`, to watch with the monitoring strategy.
        private func readConditions() throws -> [String: MonitorCondition] {
            do {
                return try monitoring.read()
            } catch let error as ValidationError {
                throw error
            } catch {
                throw ValidationError("--conditions: \(error)")
            }
        }
    }
}

/// The human form of a simulation report.
struct SimulationText {
    let report: SimulationReport
    init(_ report: SimulationReport) { self.report = report }

    var rendered: String {
        var lines: [String] = report.trace ?? []
        lines.append(
            "strategy \(report.strategy), profile \(report.profile), authorization \(report.authorization), \(Self.time(report.durationSeconds)) simulated"
        )
        lines.append(report.survived ? "survived: yes" : "survived: no")
        lines.append("alive in the background: \(Self.time(report.backgroundAliveSeconds))")
        for suspension in report.suspensions {
            lines.append(
                "suspended at \(Self.time(suspension.at)) after entering the background: \(SuspensionCause(rawValue: suspension.cause)?.description ?? suspension.cause)"
            )
        }
        if let at = report.terminatedAt {
            lines.append("terminated at \(Self.time(at)): \(report.terminationReason ?? "")")
        }
        lines.append(
            "location polls \(report.locationPolls) (fixes \(report.locationFixes)), audio pulses \(report.audioPulses), "
                + "audio \(report.audioSeconds.fixed(1)) s" + ", wake-ups \(report.wakeups)"
                + (report.strategy == KeepAliveStrategyKind.monitoring.rawValue ? ", location events \(report.locationEvents)" : "")
        )
        lines += report.notes.map { "note: \($0)" }
        return lines.joined(separator: "\n")
    }

    static func time(_ seconds: Double) -> String {
        if seconds < 120 { return "\(seconds.fixed(1)) s" }
        if seconds < 7200 { return "\((seconds / 60).fixed(1)) min" }
        return "\((seconds / 3600).fixed(2)) h"
    }
}
