import KeepAliveCore

/// Wakes a waiting deliverer early: new records were appended, or the server is reachable again.
final class WakeSignal: Sendable {
    enum Reason: Sendable, Hashable {
        case appended
        case reachable
    }

    private struct State {
        var pending: Set<Reason> = []
        var waiter: (reasons: Set<Reason>, continuation: CheckedContinuation<Reason?, Never>, number: Int)?
        var waits = 0
    }

    private let state = Locked(State())

    func raise(_ reason: Reason) {
        let waiter = state.withLock { state -> CheckedContinuation<Reason?, Never>? in
            if let waiter = state.waiter, waiter.reasons.contains(reason) {
                state.waiter = nil
                return waiter.continuation
            }
            state.pending.insert(reason)
            return nil
        }
        waiter?.resume(returning: reason)
    }

    /// Waits until one of `reasons` is raised (one raised before counts) or `timeout` passes on
    /// `time`'s clock; `nil` on a timeout or cancellation.
    func wait(for reasons: Set<Reason>, timeout: Duration, time: TimeSource) async -> Reason? {
        if let raised = state.withLock({ state in state.pending.first(where: reasons.contains).map { state.pending.remove($0)! } }) {
            return raised
        }
        let number = state.withLock { state in
            state.waits += 1
            return state.waits
        }
        let timer = Locked<Task<Void, Never>?>(nil)
        let reason = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Reason?, Never>) in
                let early = state.withLock { state -> Bool in
                    if Task.isCancelled { return true }
                    state.waiter = (reasons, continuation, number)
                    return false
                }
                if early { return continuation.resume(returning: nil) }
                timer.withLock {
                    $0 = Task { [weak self] in
                        try? await time.sleep(timeout)
                        self?.expire(number)
                    }
                }
            }
        } onCancel: {
            expire(number)
        }
        timer.withLock { $0?.cancel() }
        return reason
    }

    /// Ends wait `number` with `nil`, if it is still the one waiting.
    private func expire(_ number: Int) {
        state.withLock { state -> CheckedContinuation<Reason?, Never>? in
            guard let waiter = state.waiter, waiter.number == number else { return nil }
            state.waiter = nil
            return waiter.continuation
        }?.resume(returning: nil)
    }
}
