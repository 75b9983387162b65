import CProcessControl
import Dispatch
import Glibc

/// Calls back once when a process ends, told by the kernel (a pidfd becomes readable), so the
/// host needs no timer to notice that an app exited. Confined to the ``AppHost`` actor, which
/// makes and cancels it; the callback runs on a queue of its own.
final class ProcessExitWatch {
    private let source: any DispatchSourceRead

    /// Watches `pid`; `nil` where the kernel has no pidfd (before Linux 5.3): the host then
    /// looks for exits every housekeeping interval.
    init?(pid: Int32, queue: DispatchQueue, onExit: @escaping @Sendable () -> Void) {
        let descriptor = cprocess_pidfd_open(pid)
        guard descriptor >= 0 else { return nil }
        let source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
        // Readable from the exit on, for good: told once, then the source is cancelled (which
        // releases this handler, and with it the source it holds).
        source.setEventHandler {
            source.cancel()
            onExit()
        }
        source.setCancelHandler { close(descriptor) }
        source.resume()
        self.source = source
    }

    deinit { source.cancel() }

    /// Stops watching.
    func cancel() { source.cancel() }
}
