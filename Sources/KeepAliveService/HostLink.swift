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

    /// Follows the host's notices until the connection ends: lifecycle moves become model
    /// commands; before a freeze, audio is drained, the location session closed and delivery
    /// given until the notice's deadline (`prepareForSuspension`), then the notice is answered.
    func follow(
        post: @escaping @Sendable (ApplicationCommand) -> Void,
        prepareForSuspension: @escaping @Sendable (_ deadline: ContinuousClock.Instant?) async -> Void,
        resumed: @escaping @Sendable () -> Void,
        locationEvent: @escaping @Sendable (MonitorEvent) -> Void,
        note: @escaping @Sendable (String) -> Void
    ) -> Task<Void, Never> {
        let client = client
        return Task {
            for await notice in client.notices {
                switch notice.notice {
                case .lifecycle where notice.event == "background": post(.enterBackground)
                case .lifecycle where notice.event == "foreground": post(.enterForeground)
                case .willSuspend:
                    post(.suspendedByHost)
                    // Answered before the host's deadline, with a fifth of it to spare for the answer.
                    await prepareForSuspension(notice.deadline.map { .now + .seconds($0 * 0.8) })
                    var ack = HostRequest(.ack)
                    ack.notice = HostNotice.Kind.willSuspend.rawValue
                    client.post(ack)
                    note("host: will suspend; audio drained, location closed, answered")
                case .didResume:
                    note("host: resumed after a freeze")
                    post(.resumedByHost)
                    resumed()
                case .expiring where notice.name != nil:
                    note("host: scheduled task \(notice.name!) expiring")
                    post(.scheduledTaskExpiring(notice.name!))
                case .expiring:
                    note("host: background task #\(notice.task ?? 0) expiring")
                case .runTask:
                    note("host: run scheduled task \(notice.name ?? "")")
                    post(.runScheduledTask(notice.name ?? ""))
                case .locationEvent:
                    guard let event = notice.monitorEvent else { break }
                    locationEvent(event)
                case .terminate:
                    note("host: asked to stop")
                default:
                    break
                }
            }
            note("host: connection closed")
        }
    }
}
