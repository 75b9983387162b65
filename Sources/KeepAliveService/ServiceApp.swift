import KeepAliveAudio
import KeepAliveCore
import KeepAliveSleep

/// The app the service runs: its model, its devices (silent audio, one-shot fixes) and its
/// keep-alive strategy, driven by the model's run loop, in whose isolation it stays.
final class ServiceApp {
    let model: Application
    let player: SilentAudioPlayer
    let audio: ServiceAudioOutput
    let location: ServiceLocationProvider
    /// The devices' work that takes time (a pulse, a one-shot fix, the updates), run as child
    /// tasks of the service's work group (``OwnedTasks/run()``).
    let effects = OwnedTasks()
    private let strategy: any KeepAliveStrategy
    /// The foreground watch's switches, as the machine decides them.
    let watchSwitches: AsyncStream<Bool>
    private let watchSwitch: AsyncStream<Bool>.Continuation
    private let wiring: ServiceWiring

    init(_ service: KeepAliveService, wiring: ServiceWiring) {
        let configuration = service.configuration
        let (post, emit) = (wiring.post, wiring.emit)
        model = Application(
            profile: configuration.profile,
            backgroundModes: configuration.backgroundModes,
            authorization: service.authorization?.status ?? .always,
            logger: service.logger
        )
        player = SilentAudioPlayer(output: configuration.audio, keepsDeviceOpen: configuration.keepsAudioDeviceOpen)
        audio = ServiceAudioOutput(app: model, player: player, effects: effects, post: post)
        location = ServiceLocationProvider(app: model, manager: service.locationManager, effects: effects, post: post)
        let context = KeepAliveContext(app: model, audio: audio, location: location) { note in emit(.decision(note)) }
        strategy = configuration.strategy.make(context, hybridOptions: configuration.hybrid, isLowPower: configuration.isLowPower)
        (strategy as? HybridKeepAlive)?.onCallback = { emit(.callback) }
        (watchSwitches, watchSwitch) = AsyncStream.makeStream(of: Bool.self)
        self.wiring = wiring
        wiring.hostLink?.report(model)
        observe()
    }

    /// The model's events: told, given to the location manager, and to the machine, whose
    /// foreground watch follows.
    private func observe() {
        let (model, wiring, watchSwitch) = (model, wiring, watchSwitch)
        model.addObserver { event in
            wiring.emit(.lifecycle(event))
            wiring.locationManager.applicationState = model.state
            wiring.sleep?.app(.init(state: model.state, authorization: model.authorization, backgroundModes: model.backgroundModes))
            for action in wiring.decide(.lifecycle(event)) {
                if action == .startForegroundWatch { watchSwitch.yield(true) }
                if action == .stopForegroundWatch { watchSwitch.yield(false) }
            }
        }
    }

    /// Launches the model and runs its loop until `commands` ends.
    func run(commands: AsyncStream<ApplicationCommand>, inBackground: Bool, turned: () -> Void) async {
        let (emit, wiring, audio, location) = (wiring.emit, wiring, audio, location)
        let pulse = wiring.configuration.hybrid.pulseLength
        let device = player.output.description
        // Straight to the background: launched active first, the foreground watch opened for a
        // moment, and a fix it read then was journaled and published unasked.
        if inBackground { model.launchInBackground() } else { model.launch() }
        await ApplicationRunLoop(clock: DispatchClock()).run(
            model,
            commands: commands,
            deliver: { completion in
                switch completion {
                case .audioPulse(let id, let error):
                    emit(.pulse(length: pulse, device: device, error: error))
                    audio.finished(id, error: error)
                case .locationRequest(let id, let result):
                    // A keep-alive poll answers from the last fix: journaled once, not each time.
                    if case .success(let fix) = result, wiring.isNewPoll(fix) {
                        wiring.record(fix) { emit(.poll(result)) }
                    } else {
                        emit(.poll(result))
                    }
                    location.finished(id, result: result)
                }
            },
            afterEachStep: turned
        )
    }

    /// The stop's first part: the model ends its tasks, the watch's switches and the silent loop end.
    func terminate() {
        model.terminate()
        watchSwitch.finish()
        audio.stopLoop()
        audio.loopSwitch.finish()
    }

    /// Audio and location stop.
    func stopDevices() async {
        location.stopUpdates()
        await player.stopLoop()
        withExtendedLifetime(strategy) {}
    }
}
