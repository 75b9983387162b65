package import Foundation
import Subprocess
import SystemPackage

/// `gpsfake` replaying a log in a loop (its default, and the mode that stops cleanly), on a
/// given port, for as long as `body` runs; then SIGTERM to its process group, SIGKILL after 2 s.
package func withGPSFake<R: Sendable>(
    log: URL,
    port: Int,
    cycle: Double = 0.05,
    _ body: () async throws -> R
) async throws -> R {
    try Tools.requireGPSD()
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
            let value = try await body()
            await execution.teardown(using: teardown)
            return value
        } catch {
            await execution.teardown(using: teardown)
            throw error
        }
    }
    return result.closureResult
}
