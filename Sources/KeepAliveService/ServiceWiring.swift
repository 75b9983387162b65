import FoundationEssentials
import KeepAliveAudio
import KeepAliveCore
import KeepAliveHostProtocol
import KeepAliveMonitoring
import KeepAliveSleep

/// What the service's tasks share: its machine, and the hands that do what it decides (the
/// journal, the host's link, the conditions, the output). Sendable, so that each of the
/// service's tasks, in its task groups, holds it.
final class ServiceWiring: Sendable {
    let configuration: KeepAliveService.Configuration
    let locationManager: LocationManager
    let authorization: LocationAuthorizationManager?
    let hostLink: HostLink?
    /// The monitoring strategy's conditions (`nil` with another strategy).
    let monitoring: ServiceMonitoring?
    /// Standalone, the service's own monitor is the app's one watch, foreground or not.
    let ownMonitor: LocationMonitor?
    let conditions: ServiceConditions?
    /// The device's sleep, followed by the model's rules (`nil`: not followed).
    let sleep: DeviceSleepKeeper?
    let emit: @Sendable (KeepAliveService.Event) -> Void
    let post: @Sendable (ApplicationCommand) -> Void
    private let machine: Locked<KeepAliveServiceMachine>
    /// The time of the last fix a keep-alive poll answered with.
    private let lastPolled = Locked<Date?>(nil)

    init(
        _ service: KeepAliveService,
        post: @escaping @Sendable (ApplicationCommand) -> Void,
        emit: @escaping @Sendable (KeepAliveService.Event) -> Void
    ) {
        let configuration = service.configuration
        self.configuration = configuration
        locationManager = service.locationManager
        authorization = service.authorization
        let hostLink = configuration.host.map { HostLink(client: $0.client, app: $0.app) }
        self.hostLink = hostLink
        let monitoring = configuration.strategy == .monitoring ? configuration.monitoring : nil
        self.monitoring = monitoring
        let ownMonitor = hostLink == nil ? monitoring?.monitor : nil
        self.ownMonitor = ownMonitor
        conditions = monitoring.map {
            ServiceConditions($0, mode: configuration.reportingMode, ownMonitor: ownMonitor, host: hostLink?.client)
        }
        self.emit = emit
        self.post = post
        let journal = configuration.journal
        sleep = configuration.deviceSleepWithWork.map { sleep in
            let hands = TrackerSleepHands(
                locationManager: service.locationManager, journal: journal, delivery: configuration.delivery,
                polled: { emit(.poll($0)) }, failed: { emit(.error($0)) }
            )
            return DeviceSleepKeeper(configuration: sleep, hands: hands) { emit(.sleep($0)) }
        }
        machine = Locked(
            KeepAliveServiceMachine(options: .init(hasOwnMonitor: ownMonitor != nil, stopTimeout: configuration.stopTimeout))
        )
    }

    /// What the machine decides for `event`.
    func decide(_ event: KeepAliveServiceMachine.Event) -> [KeepAliveServiceMachine.Action] {
        machine.withLock { $0.handle(event) }
    }

    /// Whether a keep-alive poll's `fix` is not the one the last poll answered (they answer from
    /// the last fix, which stays the same until the receiver gives another).
    func isNewPoll(_ fix: Location) -> Bool {
        lastPolled.withLock { last in
            defer { last = fix.timestamp }
            return fix.timestamp == nil || fix.timestamp != last
        }
    }

    /// Keeps `fix` in the journal, if there is one.
    func record(_ fix: Location) {
        guard let journal = configuration.journal else { return }
        do { try journal.record(fix) } catch { emit(.error("\(error)")) }
    }

    /// Keeps `fix` in the journal, if there is one, then tells it (``FixRecorder/record(_:then:)``:
    /// in `full`, once stored, with the source reading on meanwhile).
    func record(_ fix: Location, then tell: @escaping @Sendable () -> Void) {
        guard let journal = configuration.journal else { return tell() }
        do { try journal.record(fix, then: tell) } catch {
            emit(.error("\(error)"))
            tell()
        }
    }

    /// A fix of a watch: journaled as the reporting mode says, and told.
    func watched(_ fix: Location) {
        let emit = emit
        guard conditions?.journals(fix) ?? true else { return emit(.fix(fix)) }
        record(fix) { emit(.fix(fix)) }
    }

    /// A location event: as the machine decides.
    func locationEvent(_ event: MonitorEvent) {
        for action in decide(.locationEvent(event)) { perform(action) }
    }

    /// Does one of the machine's actions that need no waiting.
    private func perform(_ action: KeepAliveServiceMachine.Action) {
        switch action {
        case .post(let command): post(command)
        case .note(let line): emit(.decision(line))
        case .recordEvent(let event):
            if conditions?.journalsWithEvent(event.location) ?? true { record(event.location) }  // its fix first
            if let recorder = configuration.eventRecorder {
                do { try recorder.record(event) } catch { emit(.error("\(error)")) }
            }
            emit(.locationEvent(event))
        case .resumeAfterSuspension:
            locationManager.resumeAfterSuspension()
            configuration.delivery?.resume()
        default:
            break
        }
    }

    /// The foreground watch, open while the last switch said on, until the switches end (or
    /// this task is cancelled). Each watch is a child task of this one: cancelled and awaited
    /// before the next opens, and at the end.
    func watchInForeground(_ switches: AsyncStream<Bool>) async {
        let watches = OwnedTasks()
        await withDiscardingTaskGroup { group in
            group.addTask { await watches.run() }
            var current: OwnedTasks.Handle?
            for await on in switches {
                current?.cancel()
                await current?.ended()
                current = on ? watches.addCancellable { await self.watch() } : nil
            }
            current?.cancel()
            await current?.ended()
            watches.finish()
        }
    }

    private func watch() async {
        do {
            for try await update in locationManager.updates() {
                switch update {
                case .location(let fix): watched(fix)
                case .status(let status): emit(.status(status))
                }
            }
        } catch {
            emit(.error("\(error)"))
        }
    }

    /// Adds the service's other work to `work`: the authorization's changes, the host's
    /// notices, the conditions' registration with the host, remote commands, the own monitor.
    func startWork(in work: inout DiscardingTaskGroup, player: SilentAudioPlayer) {
        if let sleep {
            work.addTask { [self] in
                do throws(SleepError) { try await sleep.run() } catch { emit(.error("\(error)")) }
            }
        }
        if let authorization {
            let changes = authorization.changes()
            work.addTask { [self] in
                for await snapshot in changes {
                    emit(.authorizationChanged(snapshot.status))
                    post(.setAuthorization(snapshot.status))
                    sleep?.authorizationChanged(snapshot.status)
                }
            }
        }
        if let hostLink {
            work.addTask { [self] in
                await hostLink.follow { notice in await self.hostNotice(notice, player: player) }
                emit(.decision("host: connection closed"))
            }
            if let conditions {
                work.addTask { [self] in
                    do {
                        try await conditions.apply()
                        emit(.decision("host: watching \(conditions.monitoring.conditions.count) conditions for the app"))
                    } catch {
                        emit(.error("the host did not take the conditions: \(error)"))
                    }
                }
            }
        }
        if let remote = configuration.remote {
            let device = remoteDevice()
            work.addTask { await remote.run(controlling: device) }
        }
        if let ownMonitor {
            work.addTask { [self] in
                do {
                    if configuration.reportingMode != nil { try await conditions?.apply() }
                    try await ownMonitor.monitor(
                        locationManager, pausing: monitoring?.pause, handler: locationEvent, paused: { [emit] paused in
                            emit(.status(paused ? .paused("stationary: the watch left, a fix at each check") : .resumed))
                        }
                    ) { fix in
                        self.watched(fix)
                    }
                } catch {
                    emit(.error("monitoring: \(error)"))
                }
            }
        }
    }

    /// A notice of the host's, as the machine decides.
    private func hostNotice(_ notice: HostNotice, player: SilentAudioPlayer) async {
        for action in decide(.hostNotice(notice)) {
            switch action {
            case .prepareForSuspension(let bound): await prepareForSuspension(deliveryWithin: bound, player: player)
            case .answer(let kind): hostLink?.answer(kind)
            default: perform(action)
            }
        }
    }

    /// Before a freeze: audio drained, the location session closed, delivery paused within
    /// `bound`; and a command for the frozen app wakes it, as a push does.
    private func prepareForSuspension(deliveryWithin bound: Duration, player: SilentAudioPlayer) async {
        await player.stopLoop()
        locationManager.closeSessionForSuspension()
        await configuration.delivery?.pause(within: bound)
        guard let hostLink, let sockets = configuration.remote?.commandSockets, !sockets.isEmpty else { return }
        do {
            try await hostLink.client.wakeOnData(from: sockets)
        } catch {
            emit(.error("commands wait for the next wake: the host cannot watch their socket (\(error))"))
        }
    }
}
