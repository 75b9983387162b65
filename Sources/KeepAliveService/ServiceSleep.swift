import KeepAliveCore
import KeepAliveSleep

extension KeepAliveService.Configuration {
    /// The keeper's configuration with the strategy's periodic work (unless set): the
    /// hybrid's and continuous location's poll at the hybrid's interval, the monitoring
    /// strategy's check and the scheduled refresh each as often as their budget allows.
    var deviceSleepWithWork: DeviceSleepKeeper.Configuration? {
        guard var sleep = deviceSleep else { return nil }
        // As often as the budget set allows (`--wake-budget`), not the default's.
        func allowed(_ kind: WakeKind) -> Duration { (sleep.options.budgets[kind] ?? kind.defaultBudget).interval }
        let work: (WakeKind, Duration)? =
            switch strategy {
            case .hybrid, .continuousLocation: (.poll, hybrid.interval)
            case .monitoring: (.monitoring, allowed(.monitoring))
            case .scheduledRefresh: (.refresh, allowed(.refresh))
            default: nil
            }
        if let (kind, period) = work, sleep.options.every[kind] == nil { sleep.options.every[kind] = period }
        return sleep
    }
}
