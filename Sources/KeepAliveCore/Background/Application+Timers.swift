import Logging

/// The app's own timers: they do not fire while the app is suspended, and fire once
/// (coalesced) when it resumes, as iOS timers do.
extension Application {
    struct AppTimer {
        let interval: Duration?
        let handler: () -> Void
        var generation = 0
        var isOverdue = false
    }

    /// A scheduled timer, for ``invalidateTimer(_:)``.
    public struct TimerToken: Sendable, Hashable {
        let id: Int
    }

    /// Runs `handler` after `delay`, then every `interval` if one is given.
    @discardableResult
    public func scheduleTimer(
        after delay: Duration,
        repeating interval: Duration? = nil,
        _ handler: @escaping () -> Void
    ) -> TimerToken {
        precondition(interval.map { $0 > .zero } ?? true, "a repeating timer needs a positive interval")
        lastTimerID += 1
        timers[lastTimerID] = AppTimer(interval: interval, handler: handler)
        queue.insert(.timer(id: lastTimerID, generation: 0), at: now + max(.zero, delay))
        return TimerToken(id: lastTimerID)
    }

    /// Stops a timer; stopping one that already stopped does nothing.
    public func invalidateTimer(_ token: TimerToken) { timers[token.id] = nil }

    /// Timers scheduled and not yet stopped (or fired, for one-shot timers).
    public var scheduledTimerCount: Int { timers.count }

    func fireTimer(_ id: Int, generation: Int) {
        guard var timer = timers[id], timer.generation == generation else { return }
        guard state.isRunning else {
            timer.isOverdue = true  // fires once on resume
            timers[id] = timer
            return
        }
        if let interval = timer.interval {
            timer.generation += 1
            timers[id] = timer
            queue.insert(.timer(id: id, generation: timer.generation), at: now + interval)
        } else {
            timers[id] = nil
        }
        if state == .background { statistics.wakeups += 1 }
        timer.handler()
    }

    func resume() {
        state = .background
        emit(.resumed)
        for id in timers.keys.sorted() where timers[id]?.isOverdue == true {
            guard var timer = timers[id] else { continue }
            timer.isOverdue = false
            timer.generation += 1
            if let interval = timer.interval {
                timers[id] = timer
                queue.insert(.timer(id: id, generation: timer.generation), at: now + interval)
            } else {
                timers[id] = nil
            }
            timer.handler()
        }
    }
}
