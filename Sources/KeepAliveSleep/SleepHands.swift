/// What the device's sleep asks of the service that runs beside it: its journal, delivery and
/// location watch. Each returns when done (or when its bound is reached).
public protocol SleepHands: Sendable {
    /// Before a sleep: close the location watch (so gpsd may power the receiver down), commit
    /// the journal, give delivery at most `within`.
    func prepareForSleep(within: Duration) async
    /// After a sleep of `asleep`: mark the time asleep as a gap in the journal, reopen the
    /// watch, deliver what waits. Awaited before a wake's work starts.
    func resumed(asleep: Duration) async
    /// The device woke for `kind`: take a fix (at most `within`) and run its work; whether a
    /// fix came.
    func runWork(_ kind: WakeKind, within: Duration) async -> Bool
    /// Deliver what waits now, within `within`.
    func deliverNow(within: Duration) async
}
