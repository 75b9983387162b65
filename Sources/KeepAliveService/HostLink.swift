import FoundationEssentials
import KeepAliveCore
import KeepAliveHost
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
            var request: HostRequest
            switch activity {
            case .backgroundTaskBegan(let identifier, let name):
                request = HostRequest(.beginTask)
                request.task = identifier.rawValue
                request.name = name
            case .backgroundTaskEnded(let identifier):
                request = HostRequest(.endTask)
                request.task = identifier.rawValue
            case .audioPlayback(let playing):
                request = HostRequest(.audio)
                request.active = playing
            case .locationActivity(let active):
                request = HostRequest(.location)
                request.active = active
            case .scheduledRequestSubmitted(let submitted, let delay):
                request = HostRequest(.schedule)
                request.name = submitted.identifier
                request.kind = submitted.kind.rawValue
                request.earliest = delay?.secondsValue
                request.power = submitted.requiresExternalPower
                request.network = submitted.requiresNetworkConnectivity
            case .scheduledTaskCompleted(let identifier, let success):
                request = HostRequest(.complete)
                request.name = identifier
                request.success = success
            }
            client.post(request)
        }
        // After the strategy's own observer (registered first): its task is reported before
        // the host hears that the app has handled entering the background.
        model.addObserver { event in
            guard event == .didEnterBackground else { return }
            var answer = HostRequest(.ack)
            answer.notice = "background"
            client.post(answer)
        }
    }

    /// Hands each of the host's notices to `handle`, in order, until the connection ends (or
    /// the task is cancelled): what they mean is ``KeepAliveServiceMachine``'s.
    func follow(_ handle: (HostNotice) async -> Void) async {
        for await notice in client.notices { await handle(notice) }
    }

    /// Answers the host's notice of `kind` (`ack`).
    func answer(_ kind: HostNotice.Kind) {
        var ack = HostRequest(.ack)
        ack.notice = kind.rawValue
        client.post(ack)
    }
}
