/// Begins a background task on entering the background and ends it when it expires or the app
/// returns: the short keep-alive (about 30 s from iOS 13, 180 s before).
final class BackgroundTaskKeepAlive: KeepAliveStrategy {
    let context: KeepAliveContext
    private(set) var task: BackgroundTaskIdentifier?

    init(_ context: KeepAliveContext) { self.context = context }

    func handle(_ event: AppEvent) {
        switch event {
        case .didEnterBackground: beginTask()
        case .willEnterForeground: endTask()
        default: break
        }
    }

    func beginTask(named name: String = "keep-alive") {
        let identifier = context.app.beginBackgroundTask(named: name) { [weak self] in self?.taskExpiring() }
        task = identifier == .invalid ? nil : identifier
    }

    /// The expiration handler: end the task, as Apple asks.
    func taskExpiring() {
        context.note("background task expiring")
        endTask()
    }

    func endTask() {
        guard let task else { return }
        context.app.endBackgroundTask(task)
        self.task = nil
    }
}

/// Asks for more time by ending and beginning the task again, up to 5 times when under 10 s remain.
final class RenewalKeepAlive: KeepAliveStrategy {
    private let base: BackgroundTaskKeepAlive
    private var checker: Application.TimerToken?
    private(set) var renewals = 0
    static let maximumRenewals = 5
    static let threshold: Duration = .seconds(10)

    init(_ context: KeepAliveContext) { base = BackgroundTaskKeepAlive(context) }

    func handle(_ event: AppEvent) {
        let app = base.context.app
        switch event {
        case .didEnterBackground:
            renewals = 0
            base.beginTask()
            checker = app.scheduleTimer(after: .seconds(1), repeating: .seconds(1)) { [weak self] in self?.check() }
        case .willEnterForeground:
            if let checker { app.invalidateTimer(checker) }
            checker = nil
            base.endTask()
        default: break
        }
    }

    private func check() {
        guard let remaining = base.context.app.backgroundTimeRemaining, remaining < Self.threshold,
            renewals < Self.maximumRenewals, base.task != nil
        else { return }
        renewals += 1
        base.context.note("renewing background task (\(renewals)), \(remaining.secondsText) left")
        base.endTask()
        base.beginTask(named: "keep-alive renewal \(renewals)")
    }
}

/// A background task, then something that keeps the app running on its own: silent audio in a
/// loop (the long keep-alive of audio apps) or continuous location (that of location apps).
final class TaskThenAssertionKeepAlive: KeepAliveStrategy {
    private let base: BackgroundTaskKeepAlive
    private let start: (KeepAliveContext) throws -> Void
    private let stop: (KeepAliveContext) -> Void

    init(
        _ context: KeepAliveContext,
        start: @escaping (KeepAliveContext) throws -> Void,
        stop: @escaping (KeepAliveContext) -> Void
    ) {
        base = BackgroundTaskKeepAlive(context)
        self.start = start
        self.stop = stop
    }

    static func audioLoop(_ context: KeepAliveContext) -> TaskThenAssertionKeepAlive {
        TaskThenAssertionKeepAlive(context, start: { try $0.audio.startLoop() }, stop: { $0.audio.stopLoop() })
    }

    static func continuousLocation(_ context: KeepAliveContext) -> TaskThenAssertionKeepAlive {
        TaskThenAssertionKeepAlive(
            context,
            start: { try $0.location.startUpdates() },
            stop: { $0.location.stopUpdates() }
        )
    }

    func handle(_ event: AppEvent) {
        switch event {
        case .didEnterBackground:
            base.beginTask()
            do { try start(base.context) } catch { base.context.note("\(error)") }
        case .willEnterForeground:
            stop(base.context)
            base.endTask()
        default: break
        }
    }
}
