/// Freezing safely: a frozen process keeps its sockets, and gpsd keeps writing to them.
extension LocationManager {
    /// Before the host freezes the process: the source session (a gpsd watch, a replay
    /// session) is closed and the cached fix forgotten. Consumers stay; their session starts
    /// again in ``resumeAfterSuspension()``.
    public func closeSessionForSuspension() {
        let session = state.withLock { state in
            defer {
                if state.session != nil { state.power?.demand(false) }
                state.session = nil
                state.sessionGeneration = state.nextID()  // its end is not the consumers' end
                state.cachedLocation = nil
            }
            return state.session
        }
        session?.cancel()
    }

    /// After a thaw: any session still open (the app was frozen before it could close it) is
    /// replaced by a new one, so no report that waited in the old socket is delivered as
    /// current, and consumers still waiting get fixes of the present.
    public func resumeAfterSuspension() {
        closeSessionForSuspension()
        let waiting = state.withLock { state in
            !state.streams.isEmpty || state.oneShots.values.contains { $0.result == nil }
        }
        if waiting { startSessionIfNeeded() }
        state.withLock { $0.restartsAfterSuspension += 1 }
    }

    /// Sessions replaced after a thaw, so that nothing old was delivered as new.
    public var sessionsRestartedAfterSuspension: Int { state.withLock { $0.restartsAfterSuspension } }
}
