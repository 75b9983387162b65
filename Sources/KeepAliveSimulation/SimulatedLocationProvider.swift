public import KeepAliveCore

/// Locations in virtual time: each request answers after `latency` with the next fix of a
/// script (or of a replayed NMEA log), or fails while the receiver is "down".
public final class SimulatedLocationProvider: KeepAliveLocationProvider {
    private unowned let app: Application
    private let fixes: [Location]
    private var nextFix = 0
    private var updating = false
    private var updateGeneration = 0
    /// How often continuous updates deliver a fix.
    public var updateInterval: Duration = .seconds(1)
    /// How long a request takes to get a fix.
    public var latency: Duration
    /// `false` makes requests fail at their timeout, as with gpsd down.
    public var isAvailable = true
    /// One-shot requests made.
    public private(set) var requests = 0
    /// Fixes delivered to requests.
    public private(set) var fixesDelivered = 0
    /// Called when updates start and stop, for traces.
    public var onChange: (String) -> Void = { _ in }

    /// A provider of fixes in `app`'s virtual time.
    ///
    /// - Parameters:
    ///   - app: the application whose location activity this is.
    ///   - latency: how long a request takes to get its fix, in the app's virtual time.
    ///   - fixes: the fixes to hand out in turn; a fixed position when empty.
    public init(app: Application, latency: Duration = .seconds(1), fixes: [Location] = []) {
        self.app = app
        self.latency = latency
        self.fixes = fixes.isEmpty ? [Location(latitude: 52.3676, longitude: 4.9041, horizontalAccuracy: 5)] : fixes
    }

    /// Answers after the simulated delay with the next fix, or the configured failure.
    public func requestLocation(
        timeout: Duration,
        completion: @escaping (Result<Location, LocationError>) -> Void
    ) throws(BackgroundError) {
        try app.beginLocationActivity()
        requests += 1
        let available = isAvailable
        let delay = available ? min(latency, timeout) : timeout
        onChange("location request")
        app.scheduleSystemWork(after: delay) { [self] in
            app.endLocationActivity()
            let result: Result<Location, LocationError>
            if available && latency <= timeout {
                let fix = fixes[nextFix % fixes.count]
                nextFix += 1
                fixesDelivered += 1
                result = .success(fix)
            } else {
                result = .failure(.locationUnknown(after: timeout, best: nil))
            }
            onChange(available ? "location fix" : "location request failed")
            app.deliverToApp { completion(result) }
        }
    }

    /// Starts continuous updates (they keep an app with location in the background alive).
    public func startUpdates() throws(BackgroundError) {
        guard !updating else { return }
        try app.beginLocationActivity()
        updating = true
        updateGeneration += 1
        onChange("location updates started")
        scheduleUpdate(generation: updateGeneration)
    }

    /// Delivers a fix every ``updateInterval`` while updating; each one wakes the app.
    private func scheduleUpdate(generation: Int) {
        app.scheduleSystemWork(after: updateInterval) { [self] in
            guard updating, generation == updateGeneration else { return }
            if isAvailable, app.state.isRunning, app.authorization.allowsLocation {
                fixesDelivered += 1
                app.deliverToApp {}
            }
            scheduleUpdate(generation: generation)
        }
    }

    /// Stops continuous updates.
    public func stopUpdates() {
        guard updating else { return }
        updating = false
        app.endLocationActivity()
        onChange("location updates stopped")
    }
}
