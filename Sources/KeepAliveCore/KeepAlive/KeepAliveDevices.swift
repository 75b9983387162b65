/// Plays silent audio for a keep-alive strategy, telling the application when audio really plays.
public protocol KeepAliveAudioOutput: AnyObject {
    /// Plays `length` of silence; the audio assertion holds while it plays. `completion` runs
    /// when it has played, or with the error if the device failed.
    func playPulse(length: Duration, completion: @escaping ((any Error)?) -> Void) throws(BackgroundError)
    /// Plays silence until ``stopLoop()``.
    func startLoop() throws(BackgroundError)
    /// Stops the loop started by ``startLoop()``.
    func stopLoop()
}

extension KeepAliveAudioOutput {
    /// Plays a pulse without waiting to hear how it went.
    public func playPulse(length: Duration) throws(BackgroundError) { try playPulse(length: length) { _ in } }
}

/// Gets locations for a keep-alive strategy, telling the application while it is active.
public protocol KeepAliveLocationProvider: AnyObject {
    /// Requests one fix; `completion` runs with the fix or the error, within `timeout`.
    func requestLocation(
        timeout: Duration,
        completion: @escaping (Result<Location, LocationError>) -> Void
    )
        throws(BackgroundError)
    /// Starts continuous updates (location activity until ``stopUpdates()``).
    func startUpdates() throws(BackgroundError)
    /// Stops the updates started by ``startUpdates()``.
    func stopUpdates()
}

/// What a strategy works with: the application and its devices.
public struct KeepAliveContext {
    /// The application kept alive.
    public let app: Application
    /// Where silent pulses play.
    public let audio: any KeepAliveAudioOutput
    /// Where one-shot fixes come from.
    public let location: any KeepAliveLocationProvider
    /// Notes a decision or an error in the run's trace.
    public let note: (String) -> Void

    /// A context of `app`, its devices and a trace.
    public init(
        app: Application,
        audio: any KeepAliveAudioOutput,
        location: any KeepAliveLocationProvider,
        note: @escaping (String) -> Void = { _ in }
    ) {
        self.app = app
        self.audio = audio
        self.location = location
        self.note = note
    }
}
