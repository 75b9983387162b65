/// A value behind a lock that tasks can wait on: `wait(until:timeout:time:)` returns once a
/// predicate holds, after any `update`, or `false` after the timeout or on cancellation. What
/// the MQTT transport's connection state and a deliverer's wake-ups (`WakeSignal`) are made of.
package final class ObservedState<Value: Sendable>: Sendable {
    private struct Waiter {
        let number: Int
        let predicate: @Sendable (Value) -> Bool
        let continuation: CheckedContinuation<Bool, Never>
    }

    private let state: Locked<(value: Value, waiters: [Waiter], count: Int)>

    package init(_ value: Value) {
        state = Locked((value, [], 0))
    }

    package var value: Value { state.withLock { $0.value } }

    /// Changes the value and wakes every waiter whose predicate now holds.
    @discardableResult
    package func update<Result>(_ body: (inout Value) -> Result) -> Result {
        let (result, ready) = state.withLock { state -> (Result, [CheckedContinuation<Bool, Never>]) in
            let result = body(&state.value)
            let value = state.value
            let ready = state.waiters.filter { $0.predicate(value) }
            state.waiters.removeAll { $0.predicate(value) }
            return (result, ready.map(\.continuation))
        }
        for continuation in ready { continuation.resume(returning: true) }
        return result
    }

    /// Waits until `predicate` holds (at once if it does), for at most `timeout` on `time`'s
    /// clock (the real one unless given). `ignoringCancellation`: a cancelled task waits too
    /// (a stopping host waits for its apps' ends from the task whose cancellation stopped it).
    package func wait(
        until predicate: @escaping @Sendable (Value) -> Bool,
        timeout: Duration,
        time: TimeSource = TimeSource(DispatchClock()),
        ignoringCancellation: Bool = false
    ) async -> Bool {
        let number = state.withLock { state in
            state.count += 1
            return state.count
        }
        let timer = Locked<Task<Void, Never>?>(nil)
        let satisfied = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let now = state.withLock { state -> Bool? in
                    if predicate(state.value) { return true }
                    if Task.isCancelled, !ignoringCancellation { return false }
                    state.waiters.append(Waiter(number: number, predicate: predicate, continuation: continuation))
                    return nil
                }
                if let now { return continuation.resume(returning: now) }
                timer.withLock {
                    $0 = Task { [weak self] in
                        try? await time.sleep(timeout)
                        self?.give(up: number)
                    }
                }
            }
        } onCancel: {
            if !ignoringCancellation { give(up: number) }
        }
        timer.withLock { $0?.cancel() }
        return satisfied
    }

    private func give(up number: Int) {
        state.withLock { state -> CheckedContinuation<Bool, Never>? in
            guard let index = state.waiters.firstIndex(where: { $0.number == number }) else { return nil }
            return state.waiters.remove(at: index).continuation
        }?.resume(returning: false)
    }
}
