public import KeepAliveCore

/// Audio that plays in virtual time: no sound card, exact counts.
public final class SimulatedAudioOutput: KeepAliveAudioOutput {
    private unowned let app: Application
    private var loopStartedAt: Duration?
    /// Pulses played.
    public private(set) var pulses = 0
    /// Total audio played, pulses and loops.
    public private(set) var playedTime: Duration = .zero
    /// Called when audio starts and stops, for traces.
    public var onChange: (String) -> Void = { _ in }

    /// Audio for `app`: playing keeps it alive in the background.
    public init(app: Application) { self.app = app }

    /// Devices that fail: a pulse then reports this error instead of playing.
    public var failure: (any Error)?

    /// Plays `length` of silence in virtual time, then calls `completion`.
    public func playPulse(length: Duration, completion: @escaping ((any Error)?) -> Void) throws(BackgroundError) {
        try app.beginAudioPlayback()
        if let failure {
            app.endAudioPlayback()
            onChange("audio pulse failed: \(failure)")
            return app.deliverToApp { completion(failure) }
        }
        pulses += 1
        playedTime += length
        onChange("audio pulse \(length.secondsText)")
        app.scheduleSystemWork(after: length) { [app] in
            app.endAudioPlayback()
            app.deliverToApp { completion(nil) }
        }
    }

    /// Plays silence until ``stopLoop()``.
    public func startLoop() throws(BackgroundError) {
        guard loopStartedAt == nil else { return }
        try app.beginAudioPlayback()
        loopStartedAt = app.now
        onChange("audio loop started")
    }

    /// Stops the loop.
    public func stopLoop() {
        guard let started = loopStartedAt else { return }
        loopStartedAt = nil
        playedTime += app.now - started
        app.endAudioPlayback()
        onChange("audio loop stopped")
    }

    /// Counts a loop still playing at the end of a run.
    public func finishAccounting() {
        if let started = loopStartedAt {
            playedTime += app.now - started
            loopStartedAt = app.now
        }
    }
}
