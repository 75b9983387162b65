import Dispatch
import Glibc

/// Calls back when files may have changed, with inotify: no wake-up while nothing changes.
///
/// Watches the folder of each file (a file replaced by `rename`, as ``AuthorizationFile``
/// writes it, is a new inode), or the nearest existing ancestor while the folder does not exist
/// yet. The callback may come for unrelated entries of those folders: it is a hint to re-read,
/// not a diff. (The host watches cgroup.events files with its own, ``CgroupEvents``.)
final class FileChangeMonitor: Sendable {
    // Dispatch sources are thread-safe (cancel may be called from any thread), but Dispatch
    // does not mark the protocol Sendable.
    nonisolated(unsafe) private let source: any DispatchSourceRead

    /// - Returns: `nil` when inotify is unavailable (then callers keep polling).
    init?(files: [String], onChange: @escaping @Sendable () -> Void) {
        let descriptor = inotify_init1(Int32(O_NONBLOCK | O_CLOEXEC))
        guard descriptor >= 0 else { return nil }
        let folders = files.map(Self.folder(of:))
        Self.watch(folders, with: descriptor)
        source = DispatchSource.makeReadSource(
            fileDescriptor: descriptor,
            queue: DispatchQueue(label: "LocationKeepAlive.files")
        )
        source.setEventHandler {
            var scratch = [UInt8](repeating: 0, count: 4096)
            while read(descriptor, &scratch, scratch.count) > 0 {}
            Self.watch(folders, with: descriptor)  // a folder that appeared since
            onChange()
        }
        source.setCancelHandler { close(descriptor) }
        source.activate()
    }

    func stop() { source.cancel() }

    deinit { source.cancel() }

    private static let events = UInt32(
        IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ATTRIB | IN_DELETE_SELF
            | IN_MOVE_SELF
    )

    /// Each folder, or its nearest existing ancestor. Adding a watch twice is harmless.
    private static func watch(_ folders: [String], with descriptor: Int32) {
        for folder in folders {
            var path = folder
            while inotify_add_watch(descriptor, path, events) < 0, path != "/", !path.isEmpty {
                path = Self.folder(of: path)
            }
        }
    }

    private static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
