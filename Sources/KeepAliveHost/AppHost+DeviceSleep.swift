import KeepAliveCore
import KeepAliveHostProtocol
import KeepAliveSleep

/// The host as the arbiter of the device's sleep (``Configuration/deviceSleep``): one
/// ``DeviceSleepKeeper`` for all its apps. Each app's rules go to its machine as they change, so
/// one `block` lock is held while the model lets any app run, and its reason names them
/// (`status` shows it); the earliest begin date of their scheduled work is the refresh wake's
/// time; a sleep closes the host's watch of the receiver, and a wake for a refresh runs the due
/// work (a frozen app thawed for it, an exited one launched) before the device sleeps again.
extension AppHost {
    /// Before a sleep: the watch of the receiver closes (gpsd may power it down).
    func deviceWillSleep() {
        decide(.deviceWillSleep)
    }

    /// After a sleep: the models catch up with the time asleep, and the watch opens again.
    func deviceResumed() {
        decide(.deviceResumed)
    }

    /// The device's sleep, as `status` says it (`nil`: the host was not asked to follow it).
    var deviceStatus: String? { sleepKeeper.map(\.status.said) }
}
