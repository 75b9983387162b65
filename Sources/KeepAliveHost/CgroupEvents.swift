import Dispatch
import Glibc

/// The kernel's word that a cgroup v2 group changed: its `cgroup.events` (the `populated` and
/// `frozen` keys) is modified, and inotify says so. The host re-checks a frozen app on each,
/// rather than polling it.
final class CgroupEvents: Sendable {
    // Dispatch sources are thread-safe (cancel may be called from any thread), but Dispatch
    // does not mark the protocol Sendable.
    nonisolated(unsafe) private let source: any DispatchSourceRead

    /// Calls `onChange` (on a queue of its own) whenever `folder/cgroup.events` changes, until
    /// ``stop()``.
    ///
    /// - Returns: `nil` when inotify or the file is not there (the host then checks at the
    ///   freeze and at each status request only).
    init?(folder: String, onChange: @escaping @Sendable () -> Void) {
        let descriptor = inotify_init1(Int32(O_NONBLOCK | O_CLOEXEC))
        guard descriptor >= 0 else { return nil }
        guard inotify_add_watch(descriptor, "\(folder)/cgroup.events", UInt32(IN_MODIFY)) >= 0 else {
            close(descriptor)
            return nil
        }
        source = DispatchSource.makeReadSource(
            fileDescriptor: descriptor,
            queue: DispatchQueue(label: "LocationKeepAlive.cgroup-events")
        )
        source.setEventHandler {
            var scratch = [UInt8](repeating: 0, count: 1024)
            while read(descriptor, &scratch, scratch.count) > 0 {}
            onChange()
        }
        source.setCancelHandler { close(descriptor) }
        source.activate()
    }

    func stop() { source.cancel() }

    deinit { source.cancel() }
}
