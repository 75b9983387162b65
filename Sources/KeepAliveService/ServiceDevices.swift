import KeepAliveAudio
import KeepAliveCore

/// Silent audio for the service: the real player, reporting back through the run loop.
final class ServiceAudioOutput: KeepAliveAudioOutput {
    private unowned let app: Application
    let player: SilentAudioPlayer
    private let post: @Sendable (ApplicationCommand) -> Void
    private var pending: [Int: ((any Error)?) -> Void] = [:]
    private var lastID = 0
    private var looping = false

    init(app: Application, player: SilentAudioPlayer, post: @escaping @Sendable (ApplicationCommand) -> Void) {
        self.app = app
        self.player = player
        self.post = post
    }

    func playPulse(length: Duration, completion: @escaping ((any Error)?) -> Void) throws(BackgroundError) {
        try app.beginAudioPlayback()
        lastID += 1
        let id = lastID
        pending[id] = completion
        Task { [player, post] in
            do {
                try await player.playPulse(length: length)
                post(.deliver(.audioPulse(id: id, error: nil)))
            } catch {
                post(.deliver(.audioPulse(id: id, error: error.message)))
            }
        }
    }

    func finished(_ id: Int, error: String?) {
        app.endAudioPlayback()
        guard let completion = pending.removeValue(forKey: id) else { return }
        app.deliverToApp { completion(error.map { ServiceDeviceError(message: $0) }) }
    }

    func startLoop() throws(BackgroundError) {
        guard !looping else { return }
        try app.beginAudioPlayback()
        looping = true
        Task { [player] in try? await player.startLoop() }
    }

    func stopLoop() {
        guard looping else { return }
        looping = false
        app.endAudioPlayback()
        Task { [player] in await player.stopLoop() }
    }
}

/// Locations for the service: one-shots on the location manager, reported through the run loop.
final class ServiceLocationProvider: KeepAliveLocationProvider {
    private unowned let app: Application
    let manager: LocationManager
    private let post: @Sendable (ApplicationCommand) -> Void
    private var pending: [Int: (Result<Location, LocationError>) -> Void] = [:]
    private var lastID = 0
    private var updates: Task<Void, Never>?

    init(app: Application, manager: LocationManager, post: @escaping @Sendable (ApplicationCommand) -> Void) {
        self.app = app
        self.manager = manager
        self.post = post
    }

    func requestLocation(
        timeout: Duration,
        completion: @escaping (Result<Location, LocationError>) -> Void
    )
        throws(BackgroundError)
    {
        try app.beginLocationActivity()
        lastID += 1
        let id = lastID
        pending[id] = completion
        Task { [manager, post] in
            let result: Result<Location, LocationError>
            do {
                result = .success(try await manager.requestLocation(timeout: timeout))
            } catch let error as LocationError {
                result = .failure(error)
            } catch {
                result = .failure(LocationError(.locationUnknown, "\(error)"))
            }
            post(.deliver(.locationRequest(id: id, result: result)))
        }
    }

    func finished(_ id: Int, result: Result<Location, LocationError>) {
        app.endLocationActivity()
        guard let completion = pending.removeValue(forKey: id) else { return }
        app.deliverToApp { completion(result) }
    }

    func startUpdates() throws(BackgroundError) {
        guard updates == nil else { return }
        try app.beginLocationActivity()
        updates = Task { [manager] in
            do { for try await _ in manager.updates() {} } catch {}
        }
    }

    func stopUpdates() {
        guard let updates else { return }
        updates.cancel()
        self.updates = nil
        app.endLocationActivity()
    }
}

/// A device error reported as text through the run loop.
struct ServiceDeviceError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
