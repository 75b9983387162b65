/// The receiver's power for a ``LocationManager``: its ``ReceiverDuty`` fed as sessions open and
/// close and fixes come, and the switches it decides done through a ``ReceiverPowerControl`` in
/// the order decided, one at a time, by a task of their own (a switch is a bus call or a socket
/// write: never on the caller's thread, which may hold the manager's lock).
///
/// ```swift
/// let power = ReceiverPowerSwitch(control: try await ReceiverPower.choose(.auto))
/// let manager = LocationManager(source: GPSDSource(), receiverPower: power)
/// ```
public final class ReceiverPowerSwitch: Sendable {
    /// The way it switches (`auto` until a way is found: see ``ReceiverPowerControl``).
    public var way: ReceiverPowerWay { control.way }

    /// Whether a way that switches the receiver is decided: until then (and with none found),
    /// what would power the receiver is done as if nothing switched it (a keep-alive poll asks
    /// for a fix).
    public var switchesTheReceiver: Bool { ![.auto, .off].contains(control.way) }
    private let control: any ReceiverPowerControl
    private let now: @Sendable () -> Duration
    private let state: Locked<State>
    private let notes: Locked<@Sendable (ReceiverPowerNote) -> Void>

    private struct State {
        var duty: ReceiverDuty
        var queue: [ReceiverDuty.Action] = []
        var working = false
        var switches = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    /// A switch through `control`; each change is told to `notes` (on the switching task).
    ///
    /// - Parameters:
    ///   - model: the receiver's starts (the M8's by default).
    ///   - now: the boot-time clock, which runs through the device's sleep (tests give their own).
    public init(
        control: any ReceiverPowerControl,
        model: ReceiverStartModel = ReceiverStartModel(),
        now: @escaping @Sendable () -> Duration = ReceiverPowerSwitch.bootTime,
        notes: @escaping @Sendable (ReceiverPowerNote) -> Void = { _ in }
    ) {
        self.control = control
        self.now = now
        self.notes = Locked(notes)
        state = Locked(State(duty: ReceiverDuty(way: control.way, keepsBackup: control.keepsBackup, model: model)))
    }

    /// The time since the process began, the device's sleep included: Swift's `ContinuousClock`
    /// is Linux's `CLOCK_BOOTTIME`.
    public static let bootTime: @Sendable () -> Duration = { origin.duration(to: .now) }
    private static let origin = ContinuousClock.now

    /// Tells each change to `sink` from now on, instead of the one given at creation (a service
    /// made after its switch).
    public func tell(_ sink: @escaping @Sendable (ReceiverPowerNote) -> Void) { notes.withLock { $0 = sink } }

    /// The receiver's power as last decided: the duty's state.
    public var duty: ReceiverDuty { state.withLock { $0.duty } }

    /// How many switches (on or off) were done.
    public var switches: Int { state.withLock { $0.switches } }

    /// A session needs the receiver, or none does any more. Returns at once.
    public func demand(_ needed: Bool) { feed(.demand(needed)) }

    /// A fix came, `age` old on the source's clock (`nil`: unknown). Returns at once.
    public func fixArrived(age: Duration?) {
        guard state.withLock({ $0.duty.isOn }) else { return }
        feed(.fix(age: age))
    }

    /// How long a wake should wait for its fix, within `bound` (``ReceiverDuty/fixWait(within:at:)``).
    public func fixWait(within bound: Duration) -> Duration {
        let now = now()
        return state.withLock { $0.duty.fixWait(within: bound, at: now) }
    }

    /// How long a wake should keep tracking after its fix so that the next one, `nextWake`
    /// later, starts hot (``ReceiverDuty/ephemerisRefresh(at:nextWake:)``).
    public func ephemerisRefresh(nextWake: Duration) -> Duration? {
        let now = now()
        return state.withLock { $0.duty.ephemerisRefresh(at: now, nextWake: nextWake) }
    }

    /// Tells that a wake keeps the receiver on `time` to collect the ephemeris.
    public func refreshing(for time: Duration) { notes.read { $0 }(.refreshing(for: time)) }

    /// Waits until every switch decided so far is done.
    public func settled() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let idle = state.withLock { state in
                guard state.working else { return true }
                state.waiters.append(done)
                return false
            }
            if idle { done.resume() }
        }
    }

    private func feed(_ event: ReceiverDuty.Event) {
        let now = now()
        let start = state.withLock { state in
            state.queue += state.duty.handle(event, at: now)
            guard !state.working, !state.queue.isEmpty else { return false }
            state.working = true
            return true
        }
        if start { Task { await self.work() } }
    }

    /// Does the queued actions in order until none is left.
    private func work() async {
        while let action = state.withLock({ state -> ReceiverDuty.Action? in
            guard !state.queue.isEmpty else {
                state.working = false
                state.waiters.forEach { $0.resume() }
                state.waiters = []
                return nil
            }
            return state.queue.removeFirst()
        }) {
            switch action {
            case .note(let note): notes.read { $0 }(note)
            case .switchOn, .switchOff:
                let on = action == .switchOn
                do throws(ReceiverPowerError) {
                    if on { try await control.switchOn() } else { try await control.switchOff() }
                    let (way, keepsBackup) = (control.way, control.keepsBackup)  // decided by now, perhaps
                    state.withLock { state in
                        state.switches += 1
                        state.duty.adopt(way: way, keepsBackup: keepsBackup)
                    }
                } catch {
                    let failure = ReceiverDuty.Event.switchFailed(on: on, reason: error.description)
                    let now = now()
                    let more = state.withLock { $0.duty.handle(failure, at: now) }
                    let sink = notes.read { $0 }
                    more.forEach { if case .note(let note) = $0 { sink(note) } }
                }
            }
        }
    }
}
