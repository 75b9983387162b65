/// Work that runs beside an app and stops while the app is suspended: the delivery module's
/// `JournalDelivery` sends the journal to tracking servers this way, so that another process
/// (`keepalive upload`) can take over while the host freezes the app.
public protocol PausableWork: Sendable {
    /// Runs until the task is cancelled.
    func run() async
    /// Stops working (and lets go of what others could take over) until ``resume()``.
    func pause() async
    /// Works again after ``pause()``.
    func resume()
}
