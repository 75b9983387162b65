package import Foundation
import LocationKeepAlive
import TestWaiting

/// Where the project's scripts and the built `keepalive` are, and whether gpsd is installed.
package enum Tools {
    /// Real-time bounds in the tests are multiplied by `KEEPALIVE_TEST_TIME_SCALE` (default 1):
    /// `scripts/tsan` sets 10, since every process runs about ten times slower under TSan.
    /// (TestWaiting's ``TestTime/bound(_:)``: one scale for every bound.)
    package static func bound(_ duration: Duration) -> Duration { TestTime.bound(duration) }

    /// How long a test waits for something that must come before it calls it a hang
    /// (``TestTime/patience``).
    package static var patience: Duration { TestTime.patience }

    package static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    package static let gatedGPSFake = repository.appendingPathComponent("scripts/gpsfake-gated")

    package static let gpsdDevices = repository.appendingPathComponent("scripts/gpsd-devices")

    /// The `keepalive` binary built beside the test bundle.
    package static var keepalive: URL {
        get throws {
            var directory = Bundle.main.bundleURL
            for _ in 0..<3 {
                let candidate = directory.appendingPathComponent("keepalive")
                if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
                directory.deleteLastPathComponent()
            }
            throw ToolMissing(
                "the keepalive binary was not built next to the tests (\(Bundle.main.bundleURL.path)): run swift build first"
            )
        }
    }

    /// Fails with an install hint when gpsd, gpsfake or its Python library is missing. Never skips.
    package static func requireGPSD() throws {
        let needed = [
            "/usr/sbin/gpsd": "gpsd",
            "/usr/bin/gpsfake": "gpsd-tools",
            "/usr/lib/python3/dist-packages/gps/fake.py": "python3-gps",
            "/usr/bin/gpspipe": "gpsd-clients",
        ]
        let missing = needed.filter { !FileManager.default.fileExists(atPath: $0.key) }
        guard missing.isEmpty else {
            throw ToolMissing(
                "gpsd is not installed (missing \(missing.keys.sorted().joined(separator: ", "))): run "
                    + "`sudo apt-get update && sudo apt-get install -y gpsd gpsd-tools gpsd-clients python3-gps` "
                    + "or `scripts/setup`, then run the tests again"
            )
        }
    }

    /// A TCP port nobody listens on now. Picked at random from 20000-29999, outside the kernel's
    /// ephemeral range that gpsfake's own free-port search uses, so parallel tests do not collide.
    package static func freePort() async throws -> Int {
        let output = try await run(
            "/usr/bin/python3",
            [
                "-c",
                """
                import random, socket
                while True:
                    port = random.randint(20000, 29999)
                    s = socket.socket()
                    try:
                        s.bind(('127.0.0.1', port))
                    except OSError:
                        continue
                    s.close()
                    print(port)
                    break
                """,
            ]
        )
        guard let port = Int(output.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw ToolMissing("could not find a free port: \(output)")
        }
        return port
    }
}

package struct ToolMissing: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}
