import KeepAliveCore
import KeepAliveHostProtocol
import KeepAliveMonitoring

/// The device's location service in a simulation, by the host's own rules for one app
/// (``HostedAppMachine``): its conditions watched with location always, or when in use while
/// it is in the foreground; each event wakes the suspended app for the event budget while its
/// wake budget allows, and a wake the budget does not allow waits for the next one it does, as
/// under `keepalive host`. What the machine asks of a host's hands (freezes, notices, launches)
/// has no part here: the model's suspension is the simulated freeze.
final class SimulatedLocationService {
    private let app: Application
    private let monitor: LocationMonitor
    private var machine: HostedAppMachine
    private let record: (String) -> Void
    private let timeline: SimulationTimelineRecorder?
    /// The events its conditions told.
    private(set) var events = 0
    /// How each was delivered, in order.
    private(set) var deliveries: [LocationEventDelivery] = []

    init(
        app: Application,
        monitor: LocationMonitor,
        eventWakes: WakeBudget,
        record: @escaping (String) -> Void,
        timeline: SimulationTimelineRecorder?
    ) {
        self.app = app
        self.monitor = monitor
        machine = HostedAppMachine(launchedFor: nil, inBackground: false, dataWakes: .data, eventWakes: eventWakes)
        self.record = record
        self.timeline = timeline
    }

    /// The app as the machine reads it: running until it is terminated, always connected, its
    /// suspension the model's (no group to freeze), never launched again.
    private var facts: HostedAppMachine.Facts {
        HostedAppMachine.Facts(
            now: app.now, state: app.state, isRunning: app.state != .notRunning, isConnected: true, isFreezeRequested: false,
            isLaunchable: false
        )
    }

    /// A fix of the track, the model advanced to its time: its events, each delivered as the machine decides.
    func fixArrived(_ fix: Location) {
        guard machine.watchesConditions(facts, authorization: app.authorization) else { return }
        for event in monitor.evaluate(fix) {
            events += 1
            record("location event: \(event.identifier) \(event.state)")
            timeline?.note(locationEvent: "\(event.identifier) \(event.state)", at: app.now.seconds)
            perform(machine.handle(.locationEvent(.locationEvent(event, received: nil)), facts))
        }
    }

    /// Serves the wakes put off that fall due before `time` (at it too, `including`), the model
    /// advanced to each.
    func serveWaitingWakes(until time: Duration, including: Bool) {
        while let due = machine.nextWaitingWake(from: app.now), due < time || (including && due == time) {
            app.advance(to: due)
            perform(machine.handle(.tick, facts))
            if machine.nextWaitingWake(from: app.now) == due { return }  // nothing served: not due after all
        }
    }

    private func perform(_ actions: [HostedAppMachine.Action]) {
        for action in actions {
            switch action {
            case .wakeForEvent: app.wakeForLocationEvent()
            case .reportDelivery(let delivery, _):
                deliveries.append(delivery)
                record("location event \(delivery)")
            case .reportPutOff(_, let after): record("location event: its wake waits \(after.secondsText) for the wake budget")
            default: break  // a host's hands: freezing, notices, launches
            }
        }
    }
}
