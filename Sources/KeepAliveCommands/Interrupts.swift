import Glibc
import UnixSignals

/// The escape hatch: the first SIGINT or SIGTERM asks for a clean stop, a second exits at once
/// (status 130), whatever the first is still waiting for.
enum Interrupts {
    /// Starts counting; the commands that stop gracefully call this before they start.
    @discardableResult
    static func exitOnSecond() -> Task<Void, Never> {
        Task.detached {
            var seen = 0
            for await _ in await UnixSignalsSequence(trapping: .sigint, .sigterm) {
                seen += 1
                if seen == 2 {
                    Console.error("keepalive: interrupted again, exiting now\n")
                    exit(130)
                }
            }
        }
    }
}
