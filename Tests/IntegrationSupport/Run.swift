import LocationKeepAlive
package import Foundation
package import Subprocess
import SystemPackage
import TestWaiting

/// The result of running a command to its end.
package struct CommandResult {
    package var status: TerminationStatus
    package var lines: [String]
    package var error: String

    package var exitCode: Int32? { if case .exited(let code) = status { code } else { nil } }
    /// The signal that ended the command, if one did.
    package var signal: Int32? { if case .signaled(let signal) = status { signal } else { nil } }
}

/// Options that put the child in its own session, so teardown reaches everything it started.
package func isolatedOptions() -> PlatformOptions {
    var options = PlatformOptions()
    options.createSession = true
    options.teardownSequence = [.gracefulShutDown(toProcessGroup: true, allowedDurationToNextStep: .seconds(2))]
    return options
}

/// A switch a test flips to send SIGINT to a running command (Ctrl-C).
package final class Interrupt: Sendable {
    private let flag = Locked(false)
    package init() {}
    package func fire() { flag.withLock { $0 = true } }
    package var isFired: Bool { flag.withLock { $0 } }
}

/// Runs a command to its end, reading its output line by line; SIGINT when `interrupt` fires,
/// killed after `timeout` (scaled).
package func runCommand(
    _ path: String,
    _ arguments: [String],
    interrupt: Interrupt? = nil,
    timeout: Duration = Tools.patience,
    onLine: (@Sendable (String) -> Void)? = nil
) async throws -> CommandResult {
    let configuration = Configuration(
        executable: .path(FilePath(path)),
        arguments: Arguments(arguments),
        platformOptions: isolatedOptions()
    )
    let result = try await Subprocess.run(
        configuration,
        input: .none,
        output: .sequence,
        error: .string(limit: 1 << 20)
    ) { execution in
        let watchdog = Task {
            if try await holds(within: timeout, { interrupt?.isFired == true }) {
                try? execution.send(signal: .interrupt)
                try await Task.sleep(for: .seconds(5))
            }
            try? execution.send(signal: .kill, toProcessGroup: true)
        }
        defer { watchdog.cancel() }
        var lines: [String] = []
        for try await line in execution.standardOutput.strings() {
            lines.append(line)
            onLine?(line)
        }
        return lines
    }
    return CommandResult(status: result.terminationStatus, lines: result.closureResult, error: result.standardError)
}

/// Runs a command and returns its standard output.
package func run(_ path: String, _ arguments: [String]) async throws -> String {
    try await runCommand(path, arguments).lines.joined(separator: "\n")
}

/// When a `keepalive` status or event line (JSON) says it was written: the subject's own clock,
/// to the millisecond, whatever kept the test from reading it sooner. (A fix line's `time` is
/// the fix's.)
package func writtenAt(_ line: String) -> Date? {
    (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]).flatMap(writtenAt)
}

/// The same, for a line already parsed.
package func writtenAt(_ object: [String: Any]) -> Date? {
    guard object["class"] as? String != "fix", let text = object["time"] as? String else { return nil }
    return try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text)
}

/// Whether a `keepalive` JSON line is the last of a clean stop (`run`'s stopped event,
/// `watch`'s stopped status).
package func isStoppedLine(_ line: String) -> Bool {
    line.contains(#""event":"stopped""#) || line.contains(#""status":"stopped""#)
}
