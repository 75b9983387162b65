/// Not kept alive at all: suspended in the background, and woken every `interval` (at the
/// earliest) by a scheduled refresh task that takes one location fix, as iOS apps do with
/// BGAppRefreshTask. Needs the `fetch` background mode.
final class ScheduledRefreshKeepAlive: KeepAliveStrategy {
    static let identifier = "keepalive.refresh"
    let context: KeepAliveContext
    let interval: Duration

    init(_ context: KeepAliveContext, interval: Duration) {
        self.context = context
        self.interval = interval
        context.app.register(forTaskWithIdentifier: Self.identifier) { [weak self] task in self?.run(task) }
    }

    func handle(_ event: AppEvent) {
        if event == .didEnterBackground { submit() }
    }

    private func submit() {
        do {
            try context.app.submit(
                BackgroundTaskRequest(identifier: Self.identifier, earliestBeginDate: context.app.now + interval)
            )
        } catch {
            context.note("refresh not scheduled: \(error.message)")
        }
    }

    private func run(_ task: ScheduledBackgroundTask) {
        context.note("refresh task: location request")
        task.expirationHandler = { [weak self] in
            self?.context.note("refresh task expiring")
            task.setTaskCompleted(success: false)
        }
        do {
            try context.location.requestLocation(timeout: .seconds(20)) { [weak self] result in
                guard let self else { return }
                if case .failure(let error) = result { context.note("refresh task: \(error.message)") }
                submit()  // the next one before this one ends
                task.setTaskCompleted(success: (try? result.get()) != nil)
            }
        } catch {
            context.note("refresh task: \(error.message)")
            submit()
            task.setTaskCompleted(success: false)
        }
    }
}
