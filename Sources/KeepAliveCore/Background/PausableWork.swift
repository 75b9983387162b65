/// Work that runs beside an app and stops while the app is suspended: the delivery module's
/// `JournalDelivery` sends the journal to tracking servers this way, so that another process
/// (`keepalive upload`) can take over while the host freezes the app.
public protocol PausableWork: Sendable {
    /// Runs until the task is cancelled.
    func run() async
    /// Stops working (and lets go of what others could take over) until ``resume()``.
    func pause() async
    /// Finishes what it can within `bound` (a delivery sends what waits), then ``pause()``s:
    /// before the host freezes the app. By default, ``pause()`` alone.
    func pause(within bound: Duration) async
    /// Finishes what it can within `bound` before the service stops and cancels ``run()``.
    /// By default, nothing.
    func finish(within bound: Duration) async
    /// Works again after ``pause()``.
    func resume()
}

extension PausableWork {
    /// ``pause()``, with nothing to finish first.
    public func pause(within bound: Duration) async { await pause() }
    /// Nothing to finish: the service cancels ``run()``.
    public func finish(within bound: Duration) async {}
}
