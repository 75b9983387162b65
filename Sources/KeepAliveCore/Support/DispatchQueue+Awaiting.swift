package import Dispatch

extension DispatchQueue {
    /// Runs `work` on this queue and returns its result to the awaiting task.
    ///
    /// For blocking work (an fsync, a D-Bus call, a read from a socket): Swift's concurrency
    /// pool has one thread per core (one on a Pi Zero), and a call that blocks one of them stalls
    /// every task beside it; a serial queue of the product's own runs on a thread of Dispatch's
    /// that may block, while the caller is suspended.
    package func awaiting<Value: Sendable, Failure: Error>(
        _ work: @escaping @Sendable () throws(Failure) -> Value
    ) async throws(Failure) -> Value {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, Failure>, Never>) in
            self.async {
                do throws(Failure) {
                    continuation.resume(returning: .success(try work()))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try result.get()
    }
}
