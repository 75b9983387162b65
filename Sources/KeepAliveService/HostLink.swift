import FoundationEssentials
import KeepAliveCore
import KeepAliveHostProtocol
import KeepAliveMonitoring

/// A service running as an app of `keepalive host`: what its model does is reported to the
/// host, whose copy of the rules is the one that freezes it, and the host's lifecycle
/// notices drive the model.
struct HostLink {
    let client: HostClient
    let app: String

    /// Reports every task, audio and location change of `model` to the host, in order.
    func report(_ model: Application) {
        let client = client
        model.schedulesRequestsElsewhere = true
        model.onActivity = { activity in
            let report: HostCommand.AppReport
            switch activity {
            case .backgroundTaskBegan(let identifier, let name): report = .beginTask(number: identifier.rawValue, name: name)
            case .backgroundTaskEnded(let identifier): report = .endTask(number: identifier.rawValue)
            case .audioPlayback(let playing): report = .audio(active: playing)
            case .locationActivity(let active): report = .location(active: active)
            case .scheduledRequestSubmitted(let submitted, let delay):
                report = .schedule(
                    HostCommand.ScheduleRequest(
                        name: submitted.identifier,
                        kind: submitted.kind,
                        earliest: delay?.secondsValue,
                        power: submitted.requiresExternalPower,
                        network: submitted.requiresNetworkConnectivity
                    )
                )
            case .scheduledTaskCompleted(let identifier, let success): report = .complete(name: identifier, success: success)
            }
            client.post(.report(report))
        }
        // After the strategy's own observer (registered first): its task is reported before
        // the host hears that the app has handled entering the background.
        model.addObserver { event in
            guard event == .didEnterBackground else { return }
            client.post(.report(.ack(notice: "background")))
        }
    }

    /// Hands each of the host's notices to `handle`, in order, until the connection ends (or
    /// the task is cancelled): what they mean is ``KeepAliveServiceMachine``'s.
    func follow(_ handle: (HostNotice) async -> Void) async {
        for await notice in client.notices { await handle(notice) }
    }

    /// Answers the host's notice of `kind` (`ack`).
    func answer(_ kind: HostNotice.Kind) {
        client.post(.report(.ack(notice: kind.rawValue)))
    }
}
