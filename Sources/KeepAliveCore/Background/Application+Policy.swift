import Logging

/// The execution policy: what keeps a background app running, and suspending it otherwise.
extension Application {
    /// Declares that audio is really playing (the audio assertion).
    ///
    /// - Throws: ``BackgroundError/Code/audioModeMissing`` in the background without the audio mode.
    public func beginAudioPlayback() throws(BackgroundError) {
        guard state.isRunning else { throw .notRunning }
        if state == .background, !backgroundModes.contains(.audio) { throw .audioModeMissing }
        audioPlaybackCount += 1
        if audioPlaybackCount == 1 { onActivity?(.audioPlayback(true)) }
    }

    /// Declares that audio stopped; the app keeps running for the profile's audio grace.
    public func endAudioPlayback() {
        guard audioPlaybackCount > 0 else { return }
        audioPlaybackCount -= 1
        if audioPlaybackCount == 0 { onActivity?(.audioPlayback(false)) }
        if audioPlaybackCount == 0, state == .background || state == .inactive || state == .active {
            audioGraceUntil = now + profile.audioGrace
            lastKeptAliveBy = .audioStopped
            schedulePolicyCheck(at: audioGraceUntil)
        }
    }

    /// Declares location activity (a request in flight, or continuous updates).
    ///
    /// - Throws: ``BackgroundError/Code/notAuthorized`` unless authorized, and
    ///   ``BackgroundError/Code/locationModeMissing`` in the background without the location mode.
    public func beginLocationActivity() throws(BackgroundError) {
        guard state.isRunning else { throw .notRunning }
        guard authorization.allowsLocation else { throw .notAuthorized(authorization) }
        if state == .background, !backgroundModes.contains(.location) { throw .locationModeMissing }
        locationActivityCount += 1
        if locationActivityCount == 1 { onActivity?(.locationActivity(true)) }
    }

    /// Declares that location activity ended; with "always", the app keeps running for the location grace.
    public func endLocationActivity() {
        guard locationActivityCount > 0 else { return }
        locationActivityCount -= 1
        if locationActivityCount == 0 { onActivity?(.locationActivity(false)) }
        if locationActivityCount == 0, locationKeepsAlive(ignoringActivity: true) {
            locationGraceUntil = now + profile.locationGrace
            lastKeptAliveBy = .locationStopped
            schedulePolicyCheck(at: locationGraceUntil)
        }
    }

    /// Runs host-delivered app code (a location fix, a completion): not while suspended, and
    /// counted as a wake-up in the background.
    public func deliverToApp(_ work: () -> Void) {
        guard state.isRunning else { return }
        if state == .background { statistics.wakeups += 1 }
        work()
    }

    /// Whether audio is playing now.
    public var isPlayingAudio: Bool { audioPlaybackCount > 0 }

    /// Whether location activity counts as keeping the app alive (mode declared, "always").
    package func locationKeepsAlive(ignoringActivity: Bool = false) -> Bool {
        (ignoringActivity || locationActivityCount > 0) && authorization == .always
            && backgroundModes.contains(.location)
    }

    func schedulePolicyCheck(at time: Duration? = nil) {
        if let time, time > now {
            queue.insert(.policyCheck, at: time)
            return
        }
        guard !policyCheckQueued else { return }
        policyCheckQueued = true
        queue.insert(.policyCheck, at: now)  // the next turn: after the running callback returns
    }

    /// What keeps the app running now, or why it should be suspended.
    func suspensionCause() -> SuspensionCause? {
        if scheduledTask != nil { return nil }
        if let deadline = budgetDeadline, now < deadline {
            if !tasks.isEmpty { return nil }
            if expirationWarned { return nil }  // ended in the expiration window: the time left is its own
        }
        if audioPlaybackCount > 0 && backgroundModes.contains(.audio) {
            lastKeptAliveBy = .audioStopped
            return nil
        }
        if locationKeepsAlive() {
            lastKeptAliveBy = .locationStopped
            return nil
        }
        if now < audioGraceUntil || now < locationGraceUntil || now < entryGraceUntil || now < handlerUntil
            || now < eventGraceUntil
        {
            return nil
        }
        if let cause = lastKeptAliveBy { return cause }
        if expirationWarned || budgetDeadline.map({ now >= $0 }) == true { return .backgroundTimeExpired }
        return tasksBegunThisEntry ? .backgroundTasksEnded : .nothingKeepsItAlive
    }

    private var tasksBegunThisEntry: Bool { lastTaskNumber > taskNumberAtEntry }

    func evaluatePolicy() {
        guard state == .background, profile.suspends, let cause = suspensionCause() else { return }
        logger.info("suspended", metadata: ["cause": "\(cause)", "time": "\(now)"])
        state = .suspended
        statistics.suspensions.append(.init(at: now, cause: cause))
        emit(.suspended(cause))
    }

    /// The host outside the app is about to freeze it: suspended, as its rules decided.
    public func suspendByHost() {
        guard state == .background else { return }
        logger.info("suspended by the host", metadata: ["time": "\(now)"])
        state = .suspended
        statistics.suspensions.append(.init(at: now, cause: .frozenByHost))
        emit(.suspended(.frozenByHost))
    }

    /// The system woke the app for a location event (a region entered or left, a significant
    /// change, a visit): resumed if suspended, it runs in the background for the profile's
    /// ``ExecutionProfile/eventBudget`` (from now, however many events came), then the policy
    /// applies again. Ignored unless the app is in the background or suspended.
    public func wakeForLocationEvent() {
        guard state == .background || state == .suspended else { return }
        if state == .suspended { resume() }
        statistics.wakeups += 1
        eventGraceUntil = now + profile.eventBudget
        lastKeptAliveBy = .eventHandled
        schedulePolicyCheck(at: eventGraceUntil)
    }

    /// The host thawed the app: it runs again in the background, overdue timers firing once.
    public func resumeByHost() {
        guard state == .suspended else { return }
        resume()
    }
}
