import Glibc

/// A value behind a lock that ThreadSanitizer can see.
///
/// `Synchronization.Mutex` waits in an uninstrumented futex when contended, so TSan reports
/// races on the state it protects (`scripts/tsan-mutex-contention.swift`). This wraps a
/// `pthread_mutex_t`, which TSan intercepts; uncontended it costs about the same.
package final class Locked<Value: Sendable>: @unchecked Sendable {
    // Unchecked: `value` is read and written only between lock and unlock below; the mutex
    // needs a stable address, hence the one allocation.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    package init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the value, holding the lock.
    ///
    /// Read a stored closure with ``read(_:)``: when `Value` is a function type, each `inout`
    /// access here writes the closure back wrapped in two more reabstraction thunks, so a
    /// closure read this way at every message grows a chain that overflows the stack.
    package func withLock<Result, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }

    /// Runs `body` with a copy of the value, holding the lock; nothing is written back.
    package func read<Result>(_ body: (Value) -> Result) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body(value)
    }
}
