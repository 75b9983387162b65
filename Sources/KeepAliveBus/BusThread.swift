import CProcessControl
import Glibc
import KeepAliveCore

/// The thread a bus connection is served on (sd-bus is not thread-safe): it processes the bus,
/// and runs its owner's `drain` each time another thread ``poke()``s it, until ``stop()``.
package final class BusThread: Sendable {
    private let stopping = Locked(false)
    /// A pipe: a byte written to `wake.write` wakes the bus thread, which polls `wake.read`.
    private let wake: (read: Int32, write: Int32)
    private let thread = Locked<pthread_t?>(nil)

    /// Makes the wake pipe; ``start(_:drain:ended:)`` starts the thread.
    package init() throws(BusFailure) {
        var ends: [Int32] = [-1, -1]
        // Close-on-exec from the start: a process spawned by another thread meanwhile gets neither end.
        guard cprocess_pipe(&ends, O_NONBLOCK) == 0 else {
            throw .setup("cannot make the bus thread's wake pipe: \(String(cString: strerror(errno)))")
        }
        wake = (ends[0], ends[1])
    }

    deinit {
        close(wake.read)
        close(wake.write)
    }

    /// Serves `bus` on a new thread: `drain` runs there after each turn and each poke; `ended`
    /// runs there last, with the failure that ended it, if one did.
    package func start(_ bus: SDBus, drain: @escaping () -> Void, ended: @escaping (BusFailure?) -> Void) throws(BusFailure) {
        let (stopping, wake) = (stopping, wake)
        let work = BusThreadWork {
            do throws(BusFailure) {
                try bus.run(wake: wake.read, stopping: { stopping.read { $0 } }, drain: drain)
                ended(nil)
            } catch {
                ended(error)
            }
        }
        var thread = pthread_t()
        let context = Unmanaged.passRetained(work).toOpaque()
        guard pthread_create(&thread, nil, { BusThreadWork.run($0) }, context) == 0 else {
            Unmanaged<BusThreadWork>.fromOpaque(context).release()
            throw .setup("cannot start the bus thread")
        }
        self.thread.withLock { $0 = thread }
    }

    /// Wakes the bus thread: its `drain` runs.
    package func poke() {
        var one: UInt8 = 1
        _ = write(wake.write, &one, 1)
    }

    /// Stops the thread after its turn and waits for it.
    package func stop() {
        stopping.withLock { $0 = true }
        poke()
        if let thread = thread.withLock({ value in defer { value = nil }; return value }) {
            pthread_join(thread, nil)
        }
    }
}

/// The bus thread's body, carried through `pthread_create`'s context.
private final class BusThreadWork: @unchecked Sendable {
    // Unchecked: created before the thread and then used by it alone.
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }

    static func run(_ context: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
        let work = Unmanaged<BusThreadWork>.fromOpaque(context!).takeRetainedValue()
        work.body()
        return nil
    }
}
