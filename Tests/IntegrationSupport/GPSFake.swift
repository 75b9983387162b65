package import Foundation
import LocationKeepAlive
import Subprocess
import SystemPackage

/// `gpsfake` replaying a log in a loop (its default, and the mode that stops cleanly), on a
/// given port, for as long as `body` runs; then SIGTERM to its process group, SIGKILL after 2 s.
///
/// `body` runs once gpsd lists the fake receiver and has a report from it. Under load, gpsfake
/// now and then starts a gpsd without its receiver (its add through gpsd's control socket is
/// lost: see `scripts/gpsd-devices`), which reports nothing, for ever: that gpsfake is stopped
/// and started again, at most three times.
///
/// The waits are gpsd's and gpsfake's, which no sanitizer slows, so the time scale does not
/// stretch them: a TSan run that took 200 s to call one gpsfake silent ran out its test's
/// time limit. A cancelled task starts no other gpsfake.
package func withGPSFake<R: Sendable>(
    log: URL,
    port: Int,
    cycle: Double = 0.05,
    _ body: () async throws -> R
) async throws -> R {
    try Tools.requireGPSD()
    var silent: [String] = []
    for attempt in 1...3 {
        try Task.checkCancellation()
        let outcome = try await runGPSFake(log: log, port: port, cycle: cycle, body)
        if let value = outcome.value { return value }
        silent.append("attempt \(attempt): \(outcome.silence)")
        FileHandle.standardError.write(Data("gpsfake on port \(port): \(outcome.silence); starting it again\n".utf8))
    }
    throw SilentGPSFake(description: "gpsfake's gpsd on port \(port) never had a report from its receiver: \(silent.joined(separator: "; "))")
}

private struct SilentGPSFake: Error, CustomStringConvertible {
    let description: String
}

private struct GPSFakeOutcome<R: Sendable>: Sendable {
    var value: R?
    var silence = ""
}

private func runGPSFake<R: Sendable>(
    log: URL,
    port: Int,
    cycle: Double,
    _ body: () async throws -> R
) async throws -> GPSFakeOutcome<R> {
    // gpsfake leaves a control socket in TMPDIR: give it a private one.
    let temporary = FileManager.default.temporaryDirectory.appendingPathComponent(
        "gpsfake-\(port)-\(UUID().uuidString)"
    )
    try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: temporary) }
    let configuration = Configuration(
        executable: .path("/usr/bin/gpsfake"),
        arguments: ["-q", "-P", String(port), "-c", String(cycle), log.path],
        environment: .inherit.updating(["TMPDIR": temporary.path]),
        platformOptions: isolatedOptions()
    )
    let result = try await Subprocess.run(configuration, input: .none, output: .discarded, error: .discarded) {
        execution in
        let teardown: [TeardownStep] = [.gracefulShutDown(toProcessGroup: true, allowedDurationToNextStep: .seconds(2))]
        do {
            var silence = try await receiverMissing(port: port)
            if silence == nil { silence = await firstReport(port: port) }
            if let silence {
                await execution.teardown(using: teardown)
                return GPSFakeOutcome<R>(silence: silence)
            }
            let value = try await body()
            await execution.teardown(using: teardown)
            return GPSFakeOutcome(value: value)
        } catch {
            await execution.teardown(using: teardown)
            throw error
        }
    }
    return result.closureResult
}

/// Waits for gpsd on `port` to list gpsfake's receiver: `nil` once it does, or what it said
/// instead within 20 s (a healthy gpsfake's gpsd lists it well within a second of launch).
private func receiverMissing(port: Int) async throws -> String? {
    let answer = try await runCommand("/usr/bin/python3", [Tools.gpsdDevices.path, String(port), "20"])
    if answer.exitCode == 0 { return nil }
    let said = answer.lines.joined(separator: " ")
    return answer.exitCode == 1 ? "gpsd listed no device in 20 s (gpsfake's add was lost)" : said
}

/// Waits for gpsd on `port` to pass on a report from its receiver: `nil` once one came, or what
/// was seen instead within 30 s (a healthy gpsfake gives its first about 1.5 s after launch).
private func firstReport(port: Int) async -> String? {
    let seen = Locked<[String]>([])
    let probe = Task {
        while !Task.isCancelled {
            do {
                for try await event in GPSDSource(port: port).events() {
                    if case .report = event { return true }
                    seen.withLock { $0.append("\(event)") }
                }
            } catch {
                seen.withLock { $0.append("\(error)") }
            }
            try? await Task.sleep(for: .milliseconds(100))  // pacing: the next connection, tried 10 times a second
        }
        return false
    }
    let limit = Task {
        try? await Task.sleep(for: .seconds(30))
        probe.cancel()
    }
    defer { limit.cancel() }
    let reported = await withTaskCancellationHandler { await probe.value } onCancel: { probe.cancel() }
    if reported { return nil }
    let events = seen.withLock { $0 }
    return "no report in 30 s; \(events.count) other events, the last: \(events.suffix(3).joined(separator: ", "))"
}
