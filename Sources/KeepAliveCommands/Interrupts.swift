package import KeepAliveCore
package import ServiceLifecycle

/// SIGINT and SIGTERM for a command that stops gracefully (``InterruptSignals``, the library's
/// own): trapped before the command opens anything, the first asks for a clean stop (honoured
/// as soon as the command can stop), a second exits at once (status 130).
package typealias Interrupts = InterruptSignals

extension InterruptSignals {
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
