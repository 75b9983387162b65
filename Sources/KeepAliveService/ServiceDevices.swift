import KeepAliveAudio
import KeepAliveCore

/// Silent audio for the service: the real player, reporting back through the run loop.
final class ServiceAudioOutput: KeepAliveAudioOutput {
    private unowned let app: Application
    let player: SilentAudioPlayer
    private let effects: OwnedTasks
    private let post: @Sendable (ApplicationCommand) -> Void
    private var pending: [Int: ((any Error)?) -> Void] = [:]
    private var lastID = 0
    private var looping = false
    /// The loop's starts and stops, done in order by ``AudioLoopSwitch/run(reporting:)``.
    let loopSwitch: AudioLoopSwitch

    init(app: Application, player: SilentAudioPlayer, effects: OwnedTasks, post: @escaping @Sendable (ApplicationCommand) -> Void) {
        self.app = app
        self.player = player
        self.effects = effects
        self.post = post
        loopSwitch = AudioLoopSwitch(player: player)
    }

    func playPulse(length: Duration, completion: @escaping ((any Error)?) -> Void) throws(BackgroundError) {
        try app.beginAudioPlayback()
        lastID += 1
        let id = lastID
        pending[id] = completion
        effects.add { [player, post] in
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
        loopSwitch.turn(on: true)
    }

    func stopLoop() {
        guard looping else { return }
        looping = false
        app.endAudioPlayback()
        loopSwitch.turn(on: false)
    }
}

/// The silent loop's starts and stops, done one after the other in the order asked (two tasks,
/// one starting and one stopping, could run in either order), a start's failure reported.
struct AudioLoopSwitch: Sendable {
    private let player: SilentAudioPlayer
    private let turns: AsyncStream<Bool>
    private let feed: AsyncStream<Bool>.Continuation

    init(player: SilentAudioPlayer) {
        self.player = player
        (turns, feed) = AsyncStream.makeStream(of: Bool.self)
    }

    /// Asks for the loop on or off.
    func turn(on: Bool) { feed.yield(on) }

    /// No more turns: ``run(reporting:)`` ends after those asked.
    func finish() { feed.finish() }

    /// Turns the loop as asked, in order, until ``finish()``, then leaves it off.
    func run(reporting failure: @Sendable (String) -> Void) async {
        for await on in turns {
            guard on else {
                await player.stopLoop()
                continue
            }
            do {
                try await player.startLoop()
            } catch {
                failure("the silent audio loop did not start: \(error.message)")
            }
        }
        await player.stopLoop()
    }
}

/// Locations for the service: one-shots on the location manager, reported through the run loop.
final class ServiceLocationProvider: KeepAliveLocationProvider {
    private unowned let app: Application
    let manager: LocationManager
    private let effects: OwnedTasks
    private let post: @Sendable (ApplicationCommand) -> Void
    private var pending: [Int: (Result<Location, LocationError>) -> Void] = [:]
    private var lastID = 0
    private var updates: OwnedTasks.Handle?

    init(app: Application, manager: LocationManager, effects: OwnedTasks, post: @escaping @Sendable (ApplicationCommand) -> Void) {
        self.app = app
        self.manager = manager
        self.effects = effects
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
        // With the receiver's power switched, the keep-alive poll answers from the last fix and
        // never powers it: on iOS the poll that keeps an app alive is nearly free, here a fix
        // would keep the GNSS on. With nothing to switch, it asks for a fix, as before.
        if manager.receiverPower?.switchesTheReceiver == true {
            let result: Result<Location, LocationError>
            do throws(LocationError) {
                result = .success(try manager.keepAlivePoll())
            } catch {
                result = .failure(error)
            }
            effects.add { [post] in post(.deliver(.locationRequest(id: id, result: result))) }
            return
        }
        effects.add { [manager, post] in
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
        updates = effects.addCancellable { [manager] in
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
