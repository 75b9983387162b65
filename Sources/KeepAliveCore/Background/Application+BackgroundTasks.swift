import Logging

/// Background tasks: one budget per background entry, shared by every task.
extension Application {
    package struct BackgroundTask {
        package let name: String
        let expirationHandler: (() -> Void)?
        var warned = false
    }

    /// Begins a background task, as `beginBackgroundTask(withName:expirationHandler:)`.
    ///
    /// - Returns: ``BackgroundTaskIdentifier/invalid`` when the app's code is not running.
    /// A task begun in the background gets only what remains of the entry's budget.
    @discardableResult
    public func beginBackgroundTask(
        named name: String = "background task",
        expirationHandler: (() -> Void)? = nil
    ) -> BackgroundTaskIdentifier {
        guard state.isRunning else {
            logger.debug("background task refused", metadata: ["name": "\(name)", "state": "\(state)"])
            return .invalid
        }
        if state == .background, profile.renewal == .resetsBudget, tasks.isEmpty { startBudget() }
        lastTaskNumber += 1
        let identifier = BackgroundTaskIdentifier(rawValue: lastTaskNumber)
        tasks[identifier] = BackgroundTask(name: name, expirationHandler: expirationHandler)
        statistics.backgroundTasksBegun += 1
        logger.debug("background task begun", metadata: ["task": "\(identifier)", "name": "\(name)"])
        onActivity?(.backgroundTaskBegan(identifier, name: name))
        if state == .background, expirationWarned {
            // Begun inside the expiration window: warned at the next turn.
            queue.insert(.expirationWarning(generation: budgetGeneration), at: now)
        }
        return identifier
    }

    /// Ends a background task. Ending an invalid or already-ended task does nothing.
    public func endBackgroundTask(_ identifier: BackgroundTaskIdentifier) {
        guard tasks.removeValue(forKey: identifier) != nil else {
            return logger.debug("end of unknown background task ignored", metadata: ["task": "\(identifier)"])
        }
        logger.debug("background task ended", metadata: ["task": "\(identifier)"])
        onActivity?(.backgroundTaskEnded(identifier))
        schedulePolicyCheck()
    }

    /// Background time left: `nil` when unbounded (in the foreground, or a profile that never suspends).
    public var backgroundTimeRemaining: Duration? {
        guard state == .background || state == .suspended, let deadline = budgetDeadline else { return nil }
        return max(.zero, deadline - now)
    }

    /// Background tasks begun and not yet ended.
    public var activeBackgroundTaskCount: Int { tasks.count }

    func startBudget() {
        budgetGeneration += 1
        expirationWarned = false
        guard let budget = profile.backgroundBudget else {
            budgetDeadline = nil
            return
        }
        let deadline = now + budget
        budgetDeadline = deadline
        queue.insert(
            .expirationWarning(generation: budgetGeneration),
            at: max(now, deadline - profile.expirationLeadTime)
        )
        queue.insert(.budgetEnd(generation: budgetGeneration), at: deadline)
        for key in tasks.keys { tasks[key]?.warned = false }
    }

    func stopBudget() {
        budgetGeneration += 1
        budgetDeadline = nil
        expirationWarned = false
    }

    func warnExpiringTasks() {
        guard state == .background else { return }
        expirationWarned = true
        for (identifier, task) in tasks.sorted(by: { $0.key.rawValue < $1.key.rawValue }) where !task.warned {
            tasks[identifier]?.warned = true
            statistics.expirationHandlersCalled += 1
            statistics.wakeups += 1
            logger.debug("background task expiring", metadata: ["task": "\(identifier)", "name": "\(task.name)"])
            task.expirationHandler?()
        }
        schedulePolicyCheck()
    }

    func budgetEnded() {
        guard state == .background else { return }
        if let (_, task) = tasks.min(by: { $0.key.rawValue < $1.key.rawValue }) {
            let reason = TerminationReason.backgroundTaskNotEnded(name: task.name)
            logger.warning("terminated", metadata: ["reason": "\(reason)"])
            statistics.termination = (now, reason)
            shutDown()
            emit(.terminated(reason))
        } else {
            evaluatePolicy()
        }
    }
}
