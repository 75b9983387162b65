import FoundationEssentials
import KeepAliveCore
import KeepAliveMonitoring
import KeepAliveService
import KeepAliveSleep

/// What `keepalive run` tells systemd (a `Type=notify` unit): `READY=1` once it has word from
/// its location source (gpsd connected, a fix, or why not), `STATUS=` as things change, and
/// `WATCHDOG=1` while its run loop turns (``RunService`` drives the pings).
final class SystemdReporting: Sendable {
    let notifier: SystemdNotifier
    private let queueDepth: @Sendable () -> Int?
    private let state = Locked(State())
    /// `READY=1` at the latest this long after the start, saying no location word came yet
    /// (a service that never asks for a fix, when-in-use in the background, is still running).
    /// The end of start-up.
    static let readyAtTheLatest = StartUpPages.startUpPeriod

    private struct State {
        var isReady = false
        var fixes = 0
        var lastFix: Date?
        var strategy = "starting"
        var appState = "launching"
        var location = "no word from the location source yet"
        var keepAlive: String?
        /// The device's sleep: held awake and why, or allowed to sleep.
        var sleep: String?
        /// The receiver's power: which way, on or off.
        var receiver: String?
        var queue: Int?
        var lastStatus: ContinuousClock.Instant?
        var lastQueueCheck: ContinuousClock.Instant?
    }

    init(notifier: SystemdNotifier, queueDepth: @escaping @Sendable () -> Int? = { nil }) {
        self.notifier = notifier
        self.queueDepth = queueDepth
    }

    /// Follows one service event; sends `READY=1` or a `STATUS=` line when it says something new.
    func observe(_ event: KeepAliveService.Event) {
        guard notifier.socket != nil else { return }
        var becomesReady = false
        var urgent = false
        let now = ContinuousClock.now
        let text: String? = state.withLock { state in
            switch event {
            case .started(_, let strategy, let authorization):
                state.strategy = "\(strategy), authorization \(authorization)"
            case .lifecycle(let event):
                guard let appState = Self.appState(after: event) else { return nil }
                state.appState = appState
                urgent = true
            case .status(.connected(let source)):
                state.location = "connected to \(source)"
                becomesReady = true
            case .status(.connectionLost(let error)):
                state.location = "lost: \(error.message)"
                becomesReady = true
            case .status(.reconnecting(let attempt, _)):
                state.location = "reconnecting (attempt \(attempt))"
            case .status(.fixLost), .status(.noFix):
                state.location = "no fix"
                becomesReady = true
            case .poll(.success(let fix)), .fix(let fix):
                state.fixes += 1
                state.lastFix = fix.timestamp
                state.location = "fixes"
                becomesReady = true
            case .poll(.failure(let error)):
                state.location = "poll failed: \(error.message)"
                becomesReady = true
            case .pulse(_, _, let error):
                state.keepAlive = error.map { "silent audio failing: \($0)" } ?? "silent audio"
            case .error(let message):
                state.location = message
                becomesReady = true
            case .locationEvent(let event):
                state.keepAlive = "\(event.identifier) \(event.state)"
            case .sleep(.followed(let way, _)):
                state.sleep = "followed through \(way)"
            case .sleep(.lockTaken(.block, let why)), .sleep(.wakelockTaken(_, let why)):
                state.sleep = "held awake: \(why)"
                urgent = true
            case .sleep(.lockReleased(.block, let why, _)), .sleep(.wakelockReleased(_, let why, _)):
                state.sleep = "may sleep: \(why)"
                urgent = true
            case .sleep(.woke(let kind, _)):
                state.sleep = "woken for \(kind.rawValue)"
                urgent = true
            case .sleep:
                break
            case .receiver(.on(let way, let start)):
                state.receiver = "receiver on (\(way), \(start) start)"
            case .receiver(.off(let way, _)):
                state.receiver = "receiver off (\(way))"
            case .receiver:
                break
            case .decision, .authorizationChanged, .callback, .status, .stopped:
                break
            }
            if becomesReady, !state.isReady {
                state.isReady = true
                urgent = true
            } else {
                becomesReady = false
            }
            if state.lastQueueCheck.map({ now - $0 >= .seconds(10) }) ?? true {
                state.lastQueueCheck = now
                state.queue = queueDepth()
            }
            // At most one status a second, but a state change or readiness at once.
            guard urgent || state.lastStatus.map({ now - $0 >= .seconds(1) }) ?? true else { return nil }
            state.lastStatus = now
            return Self.describe(state)
        }
        guard let text else { return }
        if becomesReady { notifier.ready(status: text) } else { notifier.status(text) }
    }

    /// `READY=1` if nothing made the service ready by now (see ``readyAtTheLatest``).
    func readyIfStillWaiting() {
        let text: String? = state.withLock { state in
            guard !state.isReady else { return nil }
            state.isReady = true
            return Self.describe(state)
        }
        if let text { notifier.ready(status: text) }
    }

    /// A reload that restarts the service in place: READY=1 comes again from the new image.
    func reloading() { _ = notifier.notify(["RELOADING=1", "STATUS=reloading: starting again with the new configuration"]) }

    func stopping() { notifier.stopping(status: "stopping: gracefully ending tasks, audio and gpsd") }

    private static func describe(_ state: State) -> String {
        var parts = ["\(state.appState), \(state.strategy)"]
        if let keepAlive = state.keepAlive { parts.append(keepAlive) }
        if let sleep = state.sleep { parts.append("device \(sleep)") }
        if let receiver = state.receiver { parts.append(receiver) }
        var location = "location: \(state.location)"
        if state.fixes > 0 {
            location += ", \(state.fixes) fixes"
            if let last = state.lastFix { location += ", last \(ISO8601Text.string(last))" }
        }
        parts.append(location)
        if let queue = state.queue { parts.append("delivery queue \(queue)") }
        return parts.joined(separator: "; ")
    }

    private static func appState(after event: AppEvent) -> String? {
        switch event {
        case .didFinishLaunching: "launched"
        case .didBecomeActive: "active"
        case .didEnterBackground: "background"
        case .suspended(let cause): "suspended (\(cause))"
        case .resumed: "resumed"
        case .willTerminate, .terminated: "terminating"
        default: nil
        }
    }
}
