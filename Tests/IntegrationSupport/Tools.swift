package import Foundation
import LocationKeepAlive
import TestWaiting

/// Where the project's scripts and the built `keepalive` are, and whether gpsd is installed.
package enum Tools {
    /// Behind `Locked`, not `Synchronization.Mutex`, whose futex ThreadSanitizer does not see
    /// (the TSan step reported a race here).
    private static let nextPort = Locked<Int?>(nil)

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
        get throws { try built("keepalive") }
    }

    /// The executable `name` of this package, built beside the test bundle.
    package static func built(_ name: String) throws -> URL {
        var directory = Bundle.main.bundleURL
        for _ in 0..<3 {
            let candidate = directory.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory.deleteLastPathComponent()
        }
        throw ToolMissing(
            "the \(name) binary was not built next to the tests (\(Bundle.main.bundleURL.path)): run swift build --build-tests first"
        )
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

    /// A TCP port that nothing holds on either loopback now, and that this process has not
    /// handed out before: the ports go up one by one from a random start in 20000-29999
    /// (outside the kernel's ephemeral range, from which gpsfake's own search and every client
    /// socket take theirs). Picked at random each time, two tests beside each other could be
    /// given the same one (1 chance in 10,000 a pair, and the main step starts hundreds).
    package static func freePort() async throws -> Int {
        for _ in 0..<10_000 {
            let port = nextPort.withLock { next in
                let port = next ?? Int.random(in: 20000...29999)
                next = port >= 29999 ? 20000 : port + 1
                return port
            }
            if LoopbackPort.isFree(port) { return port }
        }
        throw ToolMissing("no TCP port in 20000-29999 is free on loopback: what holds them all? (ss -ltn)")
    }
}

package struct ToolMissing: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}
