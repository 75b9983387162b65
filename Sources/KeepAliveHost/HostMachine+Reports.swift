import KeepAliveCore
import KeepAliveHostProtocol

/// What an app reports of itself on its connection, done to its value: its model's tasks,
/// audio, location activity and scheduled work (through ``HostMachine/change(_:now:_:)``, so
/// that what follows is decided at once).
extension HostMachine.App {
    /// `begin-task`: a background task of its model, under the app's number for it.
    ///
    /// - Returns: whether it was granted, and the background time left.
    mutating func beginTask(_ number: Int, named name: String, expiring: @escaping () -> Void) -> (granted: Bool, remaining: Duration?) {
        let identifier = model.beginBackgroundTask(named: name, expirationHandler: expiring)
        let granted = identifier != BackgroundTaskIdentifier.invalid
        if granted { tasks[number] = identifier }
        return (granted, model.backgroundTimeRemaining)
    }

    /// `end-task`: ends the task of that number, if it has one.
    mutating func endTask(_ number: Int) {
        if let identifier = tasks.removeValue(forKey: number) { model.endBackgroundTask(identifier) }
    }

    /// `audio`: its report of playback; its model's audio follows it and ALSA.
    ///
    /// - Returns: whether it was refused: playing in the background with no audio mode.
    mutating func reportAudio(_ active: Bool) -> Bool {
        reportsAudio = active
        followAudio()
        return active && model.state == .background && !model.backgroundModes.contains(.audio)
    }

    /// `complete`: its running scheduled task `name` ended.
    ///
    /// - Returns: whether such a task ran.
    func completeScheduledTask(named name: String?, success: Bool) -> Bool {
        guard let running = model.runningScheduledTask, running.identifier == name else { return false }
        running.setTaskCompleted(success: success)
        return true
    }

    /// `schedule`: scheduled work of its model, begun no sooner than its budget for events
    /// allows (a wake of its own), and counted against it.
    ///
    /// - Returns: how much later than asked it begins (`nil`: as asked), or why its model refused it.
    mutating func schedule(_ request: HostCommand.ScheduleRequest) -> Result<Duration?, BackgroundError> {
        let asked = model.now + (request.earliest.map { Duration.milliseconds(Int64(max(0, $0) * 1000)) } ?? .zero)
        let begin = machine.nextWake(for: .event, from: asked)
        _ = tell(.scheduled(askedFor: asked), at: model.now)  // its budget spent: nothing else to do
        let submitted = BackgroundTaskRequest(
            identifier: request.name,
            kind: request.kind,
            earliestBeginDate: request.earliest == nil && begin == asked ? nil : begin,
            requiresExternalPower: request.power,
            requiresNetworkConnectivity: request.network
        )
        do throws(BackgroundError) {
            try model.submit(submitted)
        } catch {
            return .failure(error)
        }
        return .success(begin > asked ? begin - model.now : nil)
    }
}
