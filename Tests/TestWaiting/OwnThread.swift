import Glibc

/// Runs `work`, which blocks (a socket or pipe read, `waitpid`, a child's output to its end), on
/// a thread of its own, and returns what it returned once it is done.
///
/// Swift's concurrency pool has one thread per core (two here, one on a Pi Zero): a blocking
/// call made from async code holds one of them for as long as it blocks, and every task beside
/// it waits, timers and deadlines included. Awaiting this instead suspends the caller and leaves
/// the pool free. `work` cannot be cancelled: make it end by itself (a read with a timeout, a
/// socket the test shuts down).
package func onOwnThread<Value: Sendable, Failure: Error>(
    _ work: @escaping @Sendable () throws(Failure) -> Value
) async throws(Failure) -> Value {
    let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, Failure>, Never>) in
        OwnThread.start {
            do throws(Failure) {
                continuation.resume(returning: .success(try work()))
            } catch {
                continuation.resume(returning: .failure(error))
            }
        }
    }
    return try result.get()
}

/// A detached thread for one piece of work.
enum OwnThread {
    private final class Work {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    /// Runs `body` on a new detached thread; on the calling thread when none can be made (a
    /// process out of threads still gets its answer, late).
    static func start(_ body: @escaping @Sendable () -> Void) {
        let work = Unmanaged.passRetained(Work(body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        var thread = pthread_t()
        let created = pthread_create(&thread, &attributes, { context in
            Unmanaged<Work>.fromOpaque(context!).takeRetainedValue().body()
            return nil
        }, work)
        if created != 0 { Unmanaged<Work>.fromOpaque(work).takeRetainedValue().body() }
    }
}
