/// How ``LocationMonitor/monitor(_:pausing:handler:paused:forEachFix:)`` lets the receiver rest while the device is
/// stationary: `pausesLocationUpdatesAutomatically`, with a check for movement.
///
/// Once ``LocationMonitor/isStationary``, the monitor leaves its watch (gpsd closes the device
/// 60 s after its last watcher goes, and runs its device hook, where a board can power the
/// receiver down) and asks for one fix every ``checkInterval``. A fix wholly beyond the
/// stationary radius resumes the watch. A check that gets no fix (gpsd down, no fix in time)
/// is tried again at the next. A replay or a test's script is never paused on (a log plays on
/// whether watched or not, and one that has ended answers no check): the pause applies only
/// to a source that rests while unwatched, as gpsd does (`LocationSource.restsWhenUnwatched`).
public struct StationaryPause: Sendable, Hashable {
    /// How long between checks. Default 5 minutes: no shorter than the significant-change
    /// service's own 5 minutes between events, so checking more often would not make one
    /// sooner; and long against gpsd's 60 s release, so the device is open about a quarter of
    /// the time (60 s plus the time to a fix, per 5 minutes) instead of all of it. A device that
    /// starts moving is noticed within 5 minutes and two fixes.
    public var checkInterval: Duration
    /// How long a check waits for a fix before trying again at the next one. Default 60 s, a
    /// receiver's warm start with margin.
    public var timeout: Duration

    /// A pause checking every `checkInterval`, each check waiting up to `timeout`.
    public init(checkInterval: Duration = .seconds(300), timeout: Duration = .seconds(60)) {
        self.checkInterval = checkInterval
        self.timeout = timeout
    }
}
