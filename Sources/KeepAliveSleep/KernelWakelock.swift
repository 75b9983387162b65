import Dispatch
import Glibc

/// A wakelock of the kernel's, where it offers them (`/sys/power/wake_lock`, a kernel built with
/// `CONFIG_PM_WAKELOCKS`: the convention of Android and of Sxmo's phones, whose suspender sleeps
/// whenever no wakelock is held). Held, the device does not sleep; released, it may.
///
/// A crash must not hold the device awake for ever, and nothing of the kernel's closes a
/// wakelock with its process: each hold is given the kernel's own timeout (``timeout``) and
/// renewed every third of it while held. A process that dies leaves it for at most one timeout;
/// the next start releases what is left of it.
///
/// What the kernel is told: `NAME TIMEOUT_NS` to `wake_lock` to hold (again, to renew), `NAME`
/// to `wake_unlock` to release. The writes run on a queue of the wakelock's own, in order: none
/// waits on the concurrency pool.
final class KernelWakelock: Sendable {
    /// The name `cat /sys/power/wake_lock` lists.
    let name: String
    /// How long the kernel keeps the lock if it is not renewed (the bound after a crash).
    let timeout: Duration
    private let directory: String
    /// What holds it: its name and the timeout in nanoseconds.
    private let command: String
    private let queue = DispatchQueue(label: "LocationKeepAlive.sleep.wakelock")
    // Dispatch sources are thread-safe, but Dispatch does not mark the protocol Sendable.
    nonisolated(unsafe) private let renewal: any DispatchSourceTimer
    private let failed: @Sendable (String) -> Void
    /// Whether ``hold()`` holds it (read and written on ``queue`` alone).
    nonisolated(unsafe) private var isHeld = false

    /// Whether the kernel under `directory` offers wakelocks.
    static func isOffered(in directory: String = "/sys/power") -> Bool {
        access("\(directory)/wake_lock", F_OK) == 0 && access("\(directory)/wake_unlock", F_OK) == 0
    }

    /// The wakelocks held now, as the kernel under `directory` lists them (`wake_lock`: names
    /// separated by spaces); `nil` where it offers none. Read on the caller's thread (a file of
    /// the kernel's: it does not wait).
    static func held(in directory: String = "/sys/power") -> String? {
        let descriptor = open("\(directory)/wake_lock", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var text: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            text += buffer[..<count]
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The wakelock `name` (letters, digits, `.`, `_` and `-`; anything else becomes `-`), not
    /// held; a lock of that name left by an earlier run is released. `failed` is told a renewal
    /// the kernel refused.
    /// - Throws: ``SleepError`` when the kernel has no wakelocks or the process may not hold one.
    init(name: String, directory: String = "/sys/power", timeout: Duration = .seconds(60), failed: @escaping @Sendable (String) -> Void)
        throws(SleepError)
    {
        guard Self.isOffered(in: directory) else {
            throw .setup(
                "the kernel offers no wakelocks (\(directory)/wake_lock: it is built without CONFIG_PM_WAKELOCKS): follow the sleep through logind (--device-sleep logind)"
            )
        }
        guard access("\(directory)/wake_lock", W_OK) == 0 else {
            throw .setup(
                "cannot hold a wakelock: \(directory)/wake_lock is root's and needs CAP_BLOCK_SUSPEND: run as root, or give the service's user the file (a tmpfiles.d rule) and AmbientCapabilities=CAP_BLOCK_SUSPEND"
            )
        }
        self.name = Self.kernelName(name)
        self.directory = directory
        self.timeout = timeout
        self.failed = failed
        command = "\(self.name) \(Self.nanoseconds(timeout))"
        renewal = DispatchSource.makeTimerSource(queue: queue)
        renewal.setEventHandler { [command, name = self.name] in
            if let error = Self.write(command, to: "\(directory)/wake_lock") { failed("cannot renew the wakelock \(name): \(error)") }
        }
        renewal.activate()
        // A lock of a run that crashed; the kernel refuses it (EINVAL) when there is none.
        queue.async { [name = self.name] in _ = Self.write(name, to: "\(directory)/wake_unlock") }
    }

    deinit { renewal.cancel() }

    /// Holds the device awake, renewed until ``release()``; why the kernel refused, if it did.
    func hold() async -> String? {
        let (seconds, attoseconds) = (timeout / 3).components
        let third = DispatchTimeInterval.nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
        return await onQueue {
            let refused = Self.write(self.command, to: "\(self.directory)/wake_lock")
            if refused == nil {
                self.isHeld = true
                self.renewal.schedule(deadline: .now() + third, repeating: third)
            }
            return refused
        }
    }

    /// Holds the device for ``bridge`` unless the lock is held already: called where the
    /// kernel holds the device for a moment (the wake alarm's expiry, ``WakeAlarm``), so that
    /// the work the wake is for can take the lock before anything suspends the device. Not
    /// renewed: if no work holds it, it lapses. On the caller's thread (not the pool's).
    func bridge() {
        queue.sync {
            guard !isHeld else { return }
            _ = Self.write("\(name) \(Self.nanoseconds(Self.bridge))", to: "\(directory)/wake_lock")
        }
    }

    /// How long a wake is held before its work holds it.
    static let bridge = Duration.seconds(5)

    /// Lets the device sleep (as far as this lock goes); why the kernel refused, if it did.
    func release() async -> String? {
        await onQueue {
            self.isHeld = false
            self.renewal.schedule(deadline: .distantFuture)
            return Self.write(self.name, to: "\(self.directory)/wake_unlock")
        }
    }

    /// `work`, run on the wakelock's queue, awaited.
    private func onQueue(_ work: @escaping @Sendable () -> String?) async -> String? {
        await withCheckedContinuation { continuation in queue.async { continuation.resume(returning: work()) } }
    }

    /// A duration in the kernel's nanoseconds.
    private static func nanoseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
    }

    /// `name` as the kernel takes it: one word (it reads the name up to the first space).
    static func kernelName(_ name: String) -> String {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
        let word = String(name.map { allowed.contains($0) ? $0 : "-" })
        return word.isEmpty ? "keepalive" : word
    }

    /// One command to one of the kernel's files, whole in one write (the kernel takes each
    /// write as one command; appending keeps a test's plain file a log of them). The error's
    /// words, or `nil`.
    private static func write(_ command: String, to path: String) -> String? {
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CLOEXEC)
        guard descriptor >= 0 else { return "\(path): \(String(cString: strerror(errno)))" }
        defer { close(descriptor) }
        let line = command + "\n"
        let written = line.utf8CString.withUnsafeBufferPointer { Glibc.write(descriptor, $0.baseAddress, $0.count - 1) }
        return written == line.utf8.count ? nil : "\(path): \(String(cString: strerror(errno)))"
    }
}
