import Logging

/// Scheduled background work (BGTaskScheduler): requests wait until due and until their
/// conditions hold, then the app is resumed in the background to run one.
extension Application {
    /// Registers the handler for requests with `identifier` (before submitting them).
    public func register(
        forTaskWithIdentifier identifier: String,
        using handler: @escaping (ScheduledBackgroundTask) -> Void
    ) {
        scheduledHandlers[identifier] = handler
    }

    /// Submits a request; one with the same identifier replaces it.
    ///
    /// - Throws: ``BackgroundError`` when the app lacks the `fetch` (refresh) or `processing` mode.
    public func submit(_ request: BackgroundTaskRequest) throws(BackgroundError) {
        let mode: BackgroundModes = request.kind == .refresh ? .fetch : .processing
        guard backgroundModes.contains(mode) else {
            throw BackgroundError(
                .notRunning,
                "submit failed: turn on the \(request.kind == .refresh ? "fetch" : "processing") background mode"
            )
        }
        scheduledRequests[request.identifier] = request
        statistics.scheduledTasksSubmitted += 1
        onActivity?(.scheduledRequestSubmitted(request, delay: request.earliestBeginDate.map { max(.zero, $0 - now) }))
        guard !schedulesRequestsElsewhere else { return }
        queue.insert(.scheduledCheck, at: max(now, request.earliestBeginDate ?? now))
    }

    /// Runs a submitted request now, because the host outside the app said so (it checked
    /// the time and the conditions); resumes a suspended app.
    public func runScheduledTask(identifier: String) {
        guard scheduledTask == nil, state == .background || state == .suspended,
            let request = scheduledRequests[identifier]
        else {
            return logger.debug(
                "scheduled task not run",
                metadata: ["identifier": "\(identifier)", "state": "\(state)"]
            )
        }
        start(request)
    }

    /// The host outside the app says the running task's time is nearly up.
    public func expireScheduledTask(identifier: String) {
        guard let running = scheduledTask, running.task.identifier == identifier else { return }
        expireScheduledTask(running.task.number)
    }

    /// Cancels a pending request.
    public func cancel(taskRequestWithIdentifier identifier: String) {
        scheduledRequests[identifier] = nil
    }

    /// Requests waiting to run.
    public var pendingTaskRequests: [BackgroundTaskRequest] {
        scheduledRequests.values.sorted { $0.identifier < $1.identifier }
    }

    /// The scheduled task running now, if any.
    public var runningScheduledTask: ScheduledBackgroundTask? { scheduledTask?.task }

    /// What scheduled work depends on; a change may start a task, or end a processing task.
    public var conditions: SystemConditions {
        get { currentConditions }
        set {
            guard newValue != currentConditions else { return }
            currentConditions = newValue
            if let running = scheduledTask, running.task.kind == .processing,
                let request = running.request, !request.canRun(under: newValue)
            {
                expireScheduledTask(running.task.number)  // processing runs only while they hold
            }
            queue.insert(.scheduledCheck, at: now)
        }
    }

    /// Runs the first due request whose conditions hold, resuming a suspended app.
    func runDueScheduledTask() {
        guard scheduledTask == nil, state == .background || state == .suspended else { return }
        guard
            let request = scheduledRequests.values.sorted(by: { $0.identifier < $1.identifier }).first(where: {
                ($0.earliestBeginDate ?? .zero) <= now && $0.canRun(under: currentConditions)
            })
        else { return }
        start(request)
    }

    private func start(_ request: BackgroundTaskRequest) {
        scheduledRequests[request.identifier] = nil
        if state == .suspended { resume() }
        lastTimerID += 1
        let task = ScheduledBackgroundTask(
            identifier: request.identifier,
            kind: request.kind,
            app: self,
            number: lastTimerID
        )
        let budget = request.kind == .refresh ? profile.refreshBudget : profile.processingCap
        scheduledTask = (task, request, now + budget, false)
        statistics.scheduledTasksRun += 1
        queue.insert(.scheduledWarning(task.number), at: max(now, now + budget - profile.expirationLeadTime))
        queue.insert(.scheduledEnd(task.number), at: now + budget)
        logger.info("scheduled task started", metadata: ["identifier": "\(request.identifier)", "time": "\(now)"])
        emit(.scheduledTaskStarted(request.identifier))
        if let handler = scheduledHandlers[request.identifier] ?? defaultScheduledHandler {
            handler(task)
        } else {
            logger.warning("no handler for scheduled task", metadata: ["identifier": "\(request.identifier)"])
            task.setTaskCompleted(success: false)
        }
    }

    func scheduledTaskCompleted(_ task: ScheduledBackgroundTask, success: Bool) {
        guard let running = scheduledTask, running.task === task else { return }
        scheduledTask = nil
        onActivity?(.scheduledTaskCompleted(task.identifier, success: success))
        logger.info(
            "scheduled task completed",
            metadata: ["identifier": "\(task.identifier)", "success": "\(success)"]
        )
        emit(.scheduledTaskEnded(task.identifier, completed: true))
        schedulePolicyCheck()
        queue.insert(.scheduledCheck, at: now)
    }

    /// Calls the expiration handler (the time is nearly up, or processing lost its conditions).
    func expireScheduledTask(_ number: Int) {
        guard let running = scheduledTask, running.task.number == number, !running.warned else { return }
        scheduledTask?.warned = true
        statistics.wakeups += 1
        running.task.expirationHandler?()
        if running.task.kind == .processing, let request = running.request, !request.canRun(under: currentConditions) {
            queue.insert(.scheduledEnd(number), at: now + profile.expirationLeadTime)
        }
    }

    /// The task's time ran out without `setTaskCompleted`: it ends, and the app is suspended
    /// when nothing else keeps it running.
    func endScheduledTask(_ number: Int) {
        guard let running = scheduledTask, running.task.number == number else { return }
        scheduledTask = nil
        lastKeptAliveBy = .scheduledTaskExpired
        logger.info("scheduled task expired", metadata: ["identifier": "\(running.task.identifier)"])
        emit(.scheduledTaskEnded(running.task.identifier, completed: false))
        schedulePolicyCheck()
        queue.insert(.scheduledCheck, at: now)
    }
}
