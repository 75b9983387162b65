public import Logging
public import KeepAliveCore
public import KeepAliveJournal

/// Delivers a journal to its destinations: one `Deliverer` each, woken when the network comes
/// back. What the service runs beside its work, and `keepalive upload` on its own (a separate
/// process the host never freezes: the analog of a background URLSession).
public final class JournalDelivery: PausableWork {
    /// The journal fixes are appended to and delivered from.
    public let journal: FixJournal
    /// One deliverer a destination.
    public let deliverers: [Deliverer]
    /// The writer that records into ``journal``, if the delivery was given one: what
    /// ``run(until:stopTimeout:_:)`` commits through.
    public let writer: JournalWriter?
    let network: SystemConditionsProbe?
    let logger: Logger

    /// Registers each destination in the journal (new settings keep the queue) and prepares
    /// its deliverer. `role` names this process in leases and MQTT client ids. Given the
    /// `writer` that records into `journal`, fixes are sent before their commit (see
    /// ``Deliverer``).
    public init(
        journal: FixJournal,
        destinations: [Destination],
        writer: JournalWriter? = nil,
        policy: DeliveryPolicy = DeliveryPolicy(),
        role: String = "service",
        watchesNetwork: Bool = true,
        logger: Logger = Logger(label: "LocationKeepAlive.delivery"),
        events: @escaping @Sendable (DeliveryEvent) -> Void = { _ in }
    ) throws(JournalError) {
        self.journal = journal
        self.writer = writer
        self.logger = logger
        network = watchesNetwork ? SystemConditionsProbe() : nil
        let owner = Deliverer.processOwner(role: role)
        writer?.renewLeases(of: owner, for: policy.leaseDuration)
        var deliverers: [Deliverer] = []
        for destination in destinations {
            try journal.register(destination: destination.name, settings: destination.settings)
            deliverers.append(
                Deliverer(
                    destination: destination.name,
                    journal: journal,
                    transport: destination.makeTransport(role: role == "service" ? nil : role, policy: policy, logger: logger),
                    writer: writer,
                    policy: policy,
                    owner: owner,
                    logger: logger,
                    events: events
                )
            )
        }
        self.deliverers = deliverers
    }

    /// Delivers `journal` through `deliverers` made elsewhere (a test's, with scripted
    /// transports), watching no network.
    package init(journal: FixJournal, deliverers: [Deliverer], logger: Logger = Logger(label: "LocationKeepAlive.delivery")) {
        self.journal = journal
        self.deliverers = deliverers
        self.writer = nil
        self.logger = logger
        network = nil
    }

    /// Runs every deliverer until the task is cancelled.
    public func run() async {
        await withDiscardingTaskGroup { group in
            for deliverer in deliverers { group.addTask { await deliverer.run() } }
            if let network {
                group.addTask { [deliverers] in
                    var wasUp = network.read().hasNetwork
                    while !Task.isCancelled {
                        try? await DispatchClock().sleep(for: .seconds(1))
                        let isUp = network.read().hasNetwork
                        if isUp, !wasUp { for deliverer in deliverers { deliverer.networkCameBack() } }
                        wasUp = isUp
                    }
                }
            }
        }
    }

    /// Gives every lease up and stops sending (the process is about to be frozen).
    public func pause() async {
        for deliverer in deliverers { await deliverer.pause() }
    }

    /// Sends what waits to every destination at once, and returns once all of it is sent or
    /// `bound` passed: the names of the destinations with fixes still waiting (none: all sent).
    @discardableResult
    public func drain(within bound: Duration) async -> [String] {
        await withTaskGroup(of: String?.self) { group in
            for deliverer in deliverers {
                group.addTask { await deliverer.drain(within: bound) ? nil : deliverer.destination }
            }
            return await group.reduce(into: []) { if let name = $1 { $0.append(name) } }.sorted()
        }
    }

    /// Sends what waits within `bound` (``drain(within:)``), then ``pause()``s.
    public func pause(within bound: Duration) async {
        await drain(within: bound)
        await pause()
    }

    /// Sends what waits within `bound` (``drain(within:)``): the service is stopping.
    public func finish(within bound: Duration) async {
        await drain(within: bound)
    }

    /// Every deliverer sends what waits at once (see ``Deliverer/sendNow()``).
    public func sendNow() {
        for deliverer in deliverers { deliverer.sendNow() }
    }

    /// Resumes every deliverer.
    public func resume() {
        for deliverer in deliverers { deliverer.resume() }
    }
}

extension Destination {
    /// The transport for this destination's protocol.
    public func makeTransport(role: String? = nil, policy: DeliveryPolicy = DeliveryPolicy(), logger: Logger) -> any DeliveryTransport {
        switch endpoint {
        case .ownTracksMQTT(let settings):
            MQTTTransport(settings: settings, role: role, acknowledgementTimeout: policy.acknowledgementTimeout, logger: logger)
        case .ownTracksHTTP(let settings): HTTPTransport(settings: settings, format: .ownTracks, logger: logger)
        case .traccar(let settings): HTTPTransport(settings: settings, format: .osmAnd, logger: logger)
        }
    }
}
