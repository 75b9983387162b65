import Logging

/// Runs the hybrid state machine as app code: timers on the application, polls and pulses on
/// the context's devices, every decision logged. The same runner works in the simulator and
/// in the service.
public final class HybridKeepAlive: KeepAliveStrategy {
    let context: KeepAliveContext
    private var machine: HybridKeepAliveMachine
    private var task: BackgroundTaskIdentifier?
    private var tick: Application.TimerToken?
    private var callback: Application.TimerToken?
    private let isLowPower: () -> Bool
    /// Called back every callback interval while kept alive in the background.
    public var onCallback: () -> Void = {}
    /// Polls answered and failed, pulses played and failed, client callbacks.
    public private(set) var counts = (polls: 0, failedPolls: 0, pulses: 0, failedPulses: 0, callbacks: 0)

    /// The recipe for the app in `context`; it acts on the app's lifecycle events.
    ///
    /// - Parameters:
    ///   - context: the application and its audio and location devices.
    ///   - options: the interval, pulse length and call-back interval.
    ///   - isLowPower: read at every tick (on Linux, ``PowerSupply/isLowPower(threshold:root:)``).
    public init(
        _ context: KeepAliveContext,
        options: HybridKeepAliveMachine.Options = .init(),
        isLowPower: @escaping () -> Bool = { false }
    ) {
        self.context = context
        self.machine = HybridKeepAliveMachine(options: options, authorization: context.app.authorization)
        self.isLowPower = isLowPower
    }

    /// Whether a background task, tick or callback is outstanding (for leak checks).
    public var holdsAnything: Bool { task != nil || tick != nil || callback != nil }

    /// Reacts to one lifecycle event of the app.
    public func handle(_ event: AppEvent) {
        switch event {
        case .didEnterBackground: feed(.enteredBackground)
        case .willEnterForeground: feed(.willEnterForeground)
        default: break
        }
    }

    private func feed(_ event: HybridKeepAliveMachine.Event) {
        for action in machine.handle(event) { perform(action) }
    }

    private func perform(_ action: HybridKeepAliveMachine.Action) {
        let app = context.app
        switch action {
        case .beginBackgroundTask:
            let identifier = app.beginBackgroundTask(named: "hybrid keep-alive") { [weak self] in
                self?.feed(.taskExpiring)
            }
            task = identifier == .invalid ? nil : identifier
        case .endBackgroundTask:
            if let task { app.endBackgroundTask(task) }
            task = nil
        case .scheduleTick(let delay):
            tick = app.scheduleTimer(after: delay) { [weak self] in self?.tickDue() }
        case .cancelTick:
            if let tick { app.invalidateTimer(tick) }
            tick = nil
        case .scheduleCallback(let delay):
            callback = app.scheduleTimer(after: delay) { [weak self] in self?.feed(.callbackDue) }
        case .cancelCallback:
            if let callback { app.invalidateTimer(callback) }
            callback = nil
        case .requestLocation(let timeout):
            do {
                try context.location.requestLocation(timeout: timeout) { [weak self] result in
                    switch result {
                    case .success:
                        self?.counts.polls += 1
                        self?.feed(.pollSucceeded)
                    case .failure(let error):
                        self?.counts.failedPolls += 1
                        self?.feed(.pollFailed("\(error)"))
                    }
                }
            } catch {
                counts.failedPolls += 1
                feed(.pollFailed("\(error)"))
            }
        case .playPulse(let length):
            do {
                try context.audio.playPulse(length: length) { [weak self] error in
                    guard let self else { return }
                    if let error {
                        counts.failedPulses += 1
                        feed(.audioFailed("\(error)"))
                    } else {
                        counts.pulses += 1
                    }
                }
            } catch {
                counts.failedPulses += 1
                feed(.audioFailed("\(error)"))
            }
        case .callClient:
            counts.callbacks += 1
            onCallback()
        case .log(let decision):
            var metadata = Logger.Metadata()
            for (key, value) in decision.metadata { metadata[key] = .string(value) }
            app.logger.info("\(decision.message)", metadata: metadata)
            context.note("\(decision)")
        }
    }

    private func tickDue() {
        tick = nil
        feed(.authorizationChanged(context.app.authorization))
        feed(.lowPowerChanged(isLowPower()))
        feed(.tick)
    }
}
