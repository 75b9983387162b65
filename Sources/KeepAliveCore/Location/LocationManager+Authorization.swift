import Logging

/// Enforcing the app's authorization: who gets fixes, in which app state.
extension LocationManager {
    /// Where the app is; when-in-use fixes pause in the background. A plain tool stays `.active`.
    public var applicationState: AppState {
        get { state.withLock { $0.appState } }
        set {
            state.withLock { $0.appState = newValue }
            authorization?.applicationStateChanged(to: newValue)
            refreshAccess()
        }
    }

    /// Holds background delivery for a when-in-use app, like `CLBackgroundActivitySession`,
    /// until ``endBackgroundActivitySession()``.
    public func beginBackgroundActivitySession() {
        state.withLock { $0.backgroundSessions += 1 }
        refreshAccess()
    }

    /// Ends one ``beginBackgroundActivitySession()``.
    public func endBackgroundActivitySession() {
        state.withLock { $0.backgroundSessions = max(0, $0.backgroundSessions - 1) }
        refreshAccess()
    }

    /// The app's access now.
    public var access: LocationAccess { refreshAccess() }

    func authorizationDidChange(_ snapshot: AuthorizationSnapshot) {
        let streams = state.withLock { Array($0.streams.values) }
        for consumer in streams { consumer.sink.deliver(.status(.authorizationChanged(snapshot.status))) }
        refreshAccess(snapshot)
        tellDelegateOfAuthorization()
    }

    /// Recomputes the access; announces a pause or a resume, and fails everyone on a denial.
    @discardableResult
    func refreshAccess(_ snapshot: AuthorizationSnapshot? = nil) -> LocationAccess {
        guard let authorization else { return .deliver(reduced: false) }
        let snapshot = snapshot ?? authorization.snapshot
        let (access, announcement, ended) = state.withLock {
            state -> (LocationAccess, LocationStatus?, [StreamConsumer]) in
            let access = LocationAccess.decide(
                snapshot,
                appState: state.appState,
                holdsBackgroundSession: state.backgroundSessions > 0
            )
            let previous = state.access
            state.access = access
            switch (previous, access) {
            case (.deliver, .paused(let reason)), (.denied, .paused(let reason)):
                return (access, .paused(reason), [])
            case (.paused, .deliver):
                return (access, .resumed, [])
            case (_, .denied(let error)):
                // Everyone hears it; the watch stops.
                let consumers = Array(state.streams.values)
                state.streams.removeAll()
                for (id, var oneShot) in state.oneShots where oneShot.result == nil {
                    oneShot.complete(.failure(error))
                    state.oneShots[id] = oneShot.continuation == nil ? oneShot : nil
                }
                state.stopSessionIfIdle()
                return (access, nil, consumers)
            default:
                return (access, nil, [])
            }
        }
        if case .denied(let error) = access {
            for consumer in ended { consumer.sink.finish(error) }
        }
        if let announcement {
            logger.info("location delivery", metadata: ["change": "\(announcement)"])
            let streams = state.withLock { Array($0.streams.values) }
            for consumer in streams { consumer.sink.deliver(.status(announcement)) }
        }
        return access
    }
}
