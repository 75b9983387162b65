import KeepAliveCore
import KeepAliveHostProtocol
import KeepAliveMonitoring

/// The service's decisions, as a value: events in, actions out, shaped like
/// ``HybridKeepAliveMachine``. ``KeepAliveService`` only does what it returns: the model's run
/// loop, the location watch, the journal, audio and delivery are its executor's hands.
///
/// What it decides:
/// - **The foreground watch**: a location watch of the app's own while it is active (unless its
///   own monitor is its one watch: standalone monitoring), none in the background.
/// - **The host's notices**: each becomes a command to the model, and a `will-suspend` is
///   prepared for (audio drained, the location session closed, delivery paused at most until
///   four fifths of the host's deadline and the stop timeout) before it is answered.
/// - **A location event**: journaled with its fix, told, and the app woken for the event budget.
/// - **The stop**: in order, what must end before the last fixes are delivered.
struct KeepAliveServiceMachine: Sendable {
    /// What the service runs with.
    struct Options: Sendable, Equatable {
        /// Its own monitor is the app's one watch (standalone monitoring): no foreground watch.
        var hasOwnMonitor = false
        /// How long a stop gives delivery; a pause before a freeze gets at most as long.
        var stopTimeout: Duration = .seconds(5)
    }

    /// What happened.
    enum Event: Sendable {
        /// The app's model changed.
        case lifecycle(AppEvent)
        /// The host sent a notice, `now` on the service's monotonic clock (the seconds since
        /// it began: the notice's deadline is counted from its arrival).
        case hostNotice(HostNotice)
        /// A condition changed state (the host's, or the service's own monitor).
        case locationEvent(MonitorEvent)
        /// The service is asked to stop (its commands ended).
        case stopRequested
    }

    /// What the service does.
    enum Action: Sendable, Equatable {
        /// A command to the model's run loop.
        case post(ApplicationCommand)
        /// Open the foreground location watch.
        case startForegroundWatch
        /// Close it.
        case stopForegroundWatch
        /// Before a freeze: drain audio, close the location session, give delivery at most
        /// `deliveryWithin`, and have the host watch the command sockets.
        case prepareForSuspension(deliveryWithin: Duration)
        /// Answer the host's notice.
        case answer(HostNotice.Kind)
        /// After a thaw: the location session and delivery go on.
        case resumeAfterSuspension
        /// Journal the event's fix (as the reporting mode says), then record and tell the event.
        case recordEvent(MonitorEvent)
        /// A line for the output.
        case note(String)
        /// The stop's steps, in this order: the model ends its tasks; the watches, the host's
        /// notices, the remote commands and the monitor end; audio and location stop; delivery
        /// sends what waits (at most `within`) and ends.
        case terminateApp
        case endWork
        case stopDevices
        case finishDelivery(within: Duration)
        case reportStopped
    }

    let options: Options
    /// Whether the foreground watch is open.
    private(set) var isWatching = false
    /// Stopping: later events change nothing.
    private(set) var isStopping = false

    init(options: Options) { self.options = options }

    /// What to do for `event`.
    mutating func handle(_ event: Event) -> [Action] {
        guard !isStopping else { return [] }
        switch event {
        case .lifecycle(let change): return lifecycle(change)
        case .hostNotice(let notice): return hostNotice(notice)
        case .locationEvent(let event):
            return [.recordEvent(event), .post(.wakeForLocationEvent)]
        case .stopRequested:
            isStopping = true
            isWatching = false
            return [.terminateApp, .endWork, .stopDevices, .finishDelivery(within: options.stopTimeout), .reportStopped]
        }
    }

    private mutating func lifecycle(_ change: AppEvent) -> [Action] {
        switch change {
        case .didBecomeActive where !options.hasOwnMonitor:
            isWatching = true
            return [.startForegroundWatch]  // afresh: one that was open is closed first
        case .didEnterBackground, .willTerminate, .terminated:
            guard isWatching else { return [] }
            isWatching = false
            return [.stopForegroundWatch]
        default:
            return []
        }
    }

    private func hostNotice(_ notice: HostNotice) -> [Action] {
        switch notice {
        case .lifecycle(.background): return [.post(.enterBackground)]
        case .lifecycle(.foreground): return [.post(.enterForeground)]
        case .willSuspend(let seconds):
            // Answered before the host's deadline, with a fifth of it to spare for the answer.
            let deadline = Duration.seconds(seconds * 0.8)
            return [
                .post(.suspendedByHost),
                .prepareForSuspension(deliveryWithin: max(.zero, min(options.stopTimeout, deadline))),
                .answer(.willSuspend),
                .note("host: will suspend; audio drained, location closed, answered"),
            ]
        case .didResume:
            return [.note("host: resumed after a freeze"), .post(.resumedByHost), .resumeAfterSuspension]
        case .workExpiring(let name):
            return [.note("host: scheduled task \(name) expiring"), .post(.scheduledTaskExpiring(name))]
        case .taskExpiring(let number):
            return [.note("host: background task #\(number) expiring")]
        case .runTask(let name):
            return [.note("host: run scheduled task \(name)"), .post(.runScheduledTask(name))]
        case .locationEvent(let event, _):
            return [.recordEvent(event), .post(.wakeForLocationEvent)]
        case .terminate:
            return [.note("host: asked to stop")]
        }
    }
}
