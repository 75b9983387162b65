import Glibc
import KeepAliveCore
package import ServiceLifecycle
import UnixSignals

/// SIGINT and SIGTERM for a command that stops gracefully, trapped before the command opens
/// anything, so that a signal that comes during its start-up is kept, not lost: the first asks
/// for a clean stop (honoured as soon as the command can stop), a second exits at once
/// (status 130), whatever the first is still waiting for.
///
/// Before ``trap()`` returns, a signal has its default effect: the process ends.
package struct Interrupts: Sendable {
    private let requests: AsyncStream<Void>
    private let requested: Locked<Bool>

    /// Whether SIGINT or SIGTERM came: a stop asked for, which nothing may turn into a restart.
    package var wasRequested: Bool { requested.withLock { $0 } }

    /// Traps both signals; they are trapped once this returns.
    package static func trap() async -> Interrupts {
        let signals = await UnixSignalsSequence(trapping: .sigint, .sigterm)
        let (requests, request) = AsyncStream.makeStream(of: Void.self)
        let requested = Locked(false)
        Task.detached {
            var seen = 0
            for await _ in signals {
                seen += 1
                requested.withLock { $0 = true }
                if seen == 1 {
                    request.yield()
                    request.finish()
                } else {
                    Console.error("keepalive: interrupted again, exiting now\n")
                    exit(130)
                }
            }
        }
        return Interrupts(requests: requests, requested: requested)
    }

    /// Waits for the stop request (returns at once if it came already): `true`, or `false` if
    /// the task was cancelled first. One task waits, for one command.
    package func stopRequested() async -> Bool {
        for await _ in requests { return true }
        return false
    }

    /// Runs `group` until its services end, shutting it down gracefully on the stop request
    /// (one that came before the group started included).
    package func run(_ group: ServiceGroup) async throws {
        let stopper = Task {
            if await stopRequested() { await group.triggerGracefulShutdown() }
        }
        defer { stopper.cancel() }
        try await group.run()
    }
}
