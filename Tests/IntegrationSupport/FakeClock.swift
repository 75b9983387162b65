import Foundation

/// libfaketime for the processes a test starts: their wall clock moved by what the test
/// writes in a file (`+0`, `+365d`, `-365d`), re-read at most every second, and their
/// monotonic clocks left alone, as a clock set by NTP or by hand leaves them. Never the
/// machine's own clock.
///
/// libfaketime 0.9.10 converts every absolute `timerfd_settime` deadline as if it were wall
/// time ("only CLOCK_REALTIME is handled"), monotonic ones too: with any offset, every
/// libdispatch timer (each Swift `sleep`) fires a year late or at once. A small library loaded
/// before it (`scripts/faketime/timer-shim.c`) passes the timers of other clocks straight to
/// the kernel.
package struct FakeClock {
    package static let library = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"
    /// The file of the offset.
    package let file: String
    /// The timer shim, built for this test process.
    package let shim: String

    /// An offset file in `folder`, starting at `offset`; fails saying how to install libfaketime.
    package init(folder: String, offset: String = "+0") async throws {
        guard FileManager.default.fileExists(atPath: Self.library) else {
            throw ToolMissing("libfaketime is not installed (\(Self.library)): apt-get install faketime, or run scripts/setup")
        }
        shim = try await Self.buildShim()
        file = "\(folder)/faketime"
        try set(offset)
    }

    /// The environment that puts a process on this clock.
    package var environment: [String: String] {
        [
            "LD_PRELOAD": "\(shim):\(Self.library)", "FAKETIME_TIMESTAMP_FILE": file, "FAKETIME_CACHE_DURATION": "1",
            "FAKETIME_DONT_FAKE_MONOTONIC": "1",
        ]
    }

    private static func buildShim() async throws -> String {
        let folder = NSTemporaryDirectory() + "keepalive-timer-shim-\(getpid())"
        let library = "\(folder)/timer-shim.so"
        if FileManager.default.fileExists(atPath: library) { return library }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        guard FileManager.default.fileExists(atPath: "/usr/bin/cc") else {
            throw ToolMissing("no C compiler for the libfaketime timer shim: apt-get install gcc")
        }
        let building = "\(library).\(UUID().uuidString.prefix(8))"  // tests beside each other build it once each
        let built = try await runCommand("/usr/bin/cc", ["-shared", "-fPIC", "-O2", "-o", building, Tools.repository.appendingPathComponent("scripts/faketime/timer-shim.c").path, "-ldl"])
        guard built.exitCode == 0 else { throw ToolMissing("cc could not build the timer shim: \(built.error)") }
        guard rename(building, library) == 0 else { throw ToolMissing("cannot put the timer shim at \(library)") }
        return library
    }

    /// `/usr/bin/env` arguments that run a program on this clock.
    package var env: [String] { environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" } }

    /// Moves the clock: `+365d`, `-365d`, `+0`, or `@2025-06-01 00:00:00`.
    package func set(_ offset: String) throws {
        try Data((offset + "\n").utf8).write(to: URL(fileURLWithPath: file), options: .atomic)
    }

    /// Moves the clock and waits out libfaketime's cache, so every process reads the new time.
    package func jump(_ offset: String) async throws {
        try set(offset)
        try await Task.sleep(for: .milliseconds(1_100))
    }
}
