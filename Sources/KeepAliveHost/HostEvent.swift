public import KeepAliveSleep
public import KeepAliveCore
public import KeepAliveHostProtocol
public import KeepAliveMonitoring

extension AppHost {
    /// Something the host did, for its output.
    public enum Event: Sendable {
        /// Listening on `socket`, freezing with `freezer` (chosen for `reason`).
        case started(freezer: FreezerKind, reason: String, socket: String)
        /// An app a previous host left running was taken over (and thawed if it was frozen).
        case adopted(app: String, thawed: Bool)
        /// An app was started; `pid` is its first process.
        case launched(app: String, pid: Int32)
        /// An app's lifecycle event, from the host's copy of the model.
        case lifecycle(app: String, AppEvent)
        /// An app was frozen, `latency` after it was due; `answered`: whether it acknowledged the notice in time.
        case frozen(app: String, latency: Duration, answered: Bool?)
        /// An app was thawed, `latency` after it was due.
        case thawed(app: String, latency: Duration)
        /// A frozen app was woken: data came on a socket it named (`wake-on-data`).
        case wokenForData(app: String)
        /// A wake of a suspended or exited app (`cause`: data, a location event) waits `after`
        /// for the next one its budget allows (``WakeBudget``).
        case wakePutOff(app: String, cause: String, after: Duration)
        /// An app was killed, and why.
        case killed(app: String, reason: String)
        /// One of an app's processes was found outside its group (the app is killed for it).
        case escaped(app: String, AppProcessGroup.Escape)
        /// An app's last process exited with `status`.
        case exited(app: String, status: Int32)
        /// One of an app's conditions changed state, and what the host did for it.
        case locationEvent(app: String, MonitorEvent, LocationEventDelivery)
        /// The host opened (`true`) or left its watch of the receiver for the apps' conditions.
        case watching(Bool)
        /// A request was refused, and why.
        case refused(String)
        /// Something failed; the host goes on.
        case error(String)
        /// A step of the device's sleep (``Configuration/deviceSleep``).
        case sleep(SleepNotice)
        /// The host stopped: every app thawed, stopped and its group removed.
        case stopped
    }
}
