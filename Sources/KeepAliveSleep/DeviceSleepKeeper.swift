public import KeepAliveCore

/// The device's sleep followed for one service (or a host): does what ``DeviceSleepMachine``
/// decides with logind's locks and signals, the kernel's wakelocks, the wake alarm and the
/// service's ``SleepHands``, and says each step (``SleepNotice``). Runs in ``run()`` until
/// cancelled.
public final class DeviceSleepKeeper: Sendable {
    /// What the keeper runs with.
    public struct Configuration: Sendable {
        /// The machine's rules, budgets and bounds.
        public var options = DeviceSleepMachine.Options()
        /// The lock's `who`, as `systemd-inhibit --list` shows it; the wakelock's name is made
        /// of it (``wakelockName``).
        public var who = "keepalive"
        /// Through what the device's sleep is followed and held.
        public var way = DeviceSleepWay.auto
        /// A way that cannot be used is an error (`false`: it is said, and the sleep is not
        /// followed through it: a device without systemd-logind does not sleep through it).
        public var isRequired = false
        /// Where the kernel's wakelocks are (a test's folder of plain files stands in for it).
        public var wakelockDirectory = "/sys/power"
        /// How long the kernel keeps the wakelock when it is not renewed: the longest a crash
        /// can leave the device held awake. Renewed every third of it while held.
        public var wakelockTimeout: Duration = .seconds(60)

        /// The wakelock's name: `keepalive` for the service's own `who`, `keepalive-WHO` for
        /// another (`keepalive host` holds `keepalive-host`).
        public var wakelockName: String {
            let rest = who.hasPrefix("keepalive") ? who.dropFirst("keepalive".count).drop { $0 == " " || $0 == "-" } : who[...]
            return KernelWakelock.kernelName(rest.isEmpty ? "keepalive" : "keepalive-\(rest)")
        }

        /// The defaults: held awake as the rules allow, wakes by the default budgets.
        public init() {}
    }

    /// Where the keeper stands, for `status`.
    public struct Status: Sendable, Equatable {
        /// Whether the sleep is followed now (logind reached or a wakelock open, the keeper running).
        public var isFollowed = false
        /// Through what it is followed: logind, the kernel's wakelocks, or both.
        public var way: DeviceSleepWay?
        /// Why the device is held awake now (`nil`: it is not).
        public var heldFor: String?
        /// The user's session.
        public var session = SessionState.none
        /// Sleeps the device went through.
        public var sleeps = 0
        /// Wakes the alarm made, per kind.
        public var wakes: [WakeKind: Int] = [:]
        /// The next wake alarm armed, on the boot clock, and for what.
        public var alarm: DeviceSleepMachine.Alarm?
        /// How long a sleep's preparation may take: the configured bound, within logind's delay.
        public var preparation: Duration = .zero
    }

    /// How it follows the device's sleep.
    public let configuration: Configuration
    private let hands: any SleepHands
    private let notice: @Sendable (SleepNotice) -> Void
    private let input: AsyncStream<Input>.Continuation
    private let events: AsyncStream<Input>
    private let state = Locked(Status())
    private let rules = Locked(DeviceSleepMachine.AppRules(state: .notRunning, authorization: .notDetermined))

    /// A keeper for `hands`, saying what it does to `notice`.
    public init(configuration: Configuration = Configuration(), hands: any SleepHands, notice: @escaping @Sendable (SleepNotice) -> Void) {
        self.configuration = configuration
        self.hands = hands
        self.notice = notice
        (events, input) = AsyncStream.makeStream(of: Input.self)
    }

    /// Where it stands now.
    public var status: Status { state.read { $0 } }

    /// The model's view of the app changed.
    public func app(_ rules: DeviceSleepMachine.AppRules) {
        self.rules.withLock { $0 = rules }
        input.yield(.machine(.app(rules, now: BootClock.now())))
    }

    /// The app's authorization changed (its state did not).
    public func authorizationChanged(_ status: LocationAuthorization) {
        let rules = rules.withLock { rules in
            rules.authorization = status
            return rules
        }
        input.yield(.machine(.app(rules, now: BootClock.now())))
    }

    /// Work of `kind` wants the device awake at `time` on the boot clock (`nil`: no longer).
    public func wake(_ kind: WakeKind, at time: Duration?) { input.yield(.machine(.wake(kind, at: time, now: BootClock.now()))) }

    /// How often work of `kind` may wake the device from now on (`nil`: never); the wakes it
    /// made already count against the new budget, and the alarm moves at once if it must.
    public func setWakeBudget(_ budget: WakeBudget?, for kind: WakeKind) {
        input.yield(.machine(.budget(kind, budget, now: BootClock.now())))
    }

    /// Follows the device's sleep (logind, the kernel's wakelocks, or both: ``Configuration/way``)
    /// and does what the machine decides until cancelled; then releases its locks. Without a
    /// wake alarm (no `CAP_WAKE_ALARM`), it says so and goes on without wakes. A lost
    /// connection to the bus (dbus restarted) is made again, and a restart of logind is
    /// followed: the locks the rules hold are taken again, and it is said.
    /// - Throws: ``SleepError`` when the way cannot be used and ``Configuration/isRequired``;
    ///   when not required, it says why and returns.
    public func run() async throws(SleepError) {
        let input = input
        // Whatever ends the run, what is told from then on is dropped, not kept.
        defer {
            input.finish()
            state.withLock { $0.isFollowed = false }
        }
        let ways: (logind: Logind?, wakelock: KernelWakelock?)
        do throws(SleepError) {
            ways = try openWays()
        } catch {
            if configuration.isRequired { throw error }
            notice(.notFollowed("\(error)"))
            return
        }
        let way: DeviceSleepWay = ways.logind == nil ? .wakelocks : ways.wakelock == nil ? .logind : .both
        notice(.followed(way, wakelock: ways.wakelock?.name))
        let alarm = openAlarm(bridgedBy: ways.wakelock)
        defer { alarm?.stopWatching() }
        var loop = Loop(logind: ways.logind, wakelock: ways.wakelock, alarm: alarm)
        defer { loop.logind?.stop() }
        var machine = DeviceSleepMachine(options: configuration.options)
        state.withLock {
            $0.isFollowed = true
            $0.way = way
            $0.preparation = configuration.options.preparation
        }
        if let logind = ways.logind { await fitPreparation(to: logind) }
        input.yield(.machine(.started(now: BootClock.now())))
        // Every resume, announced or not: a sleep nobody announced (`rtcwake -m mem`) is told.
        input.yield(.timeAsleep())
        let resumes: ResumeWatch?
        do throws(SleepError) {
            resumes = try ResumeWatch { input.yield(.timeAsleep()) }
        } catch {
            notice(.failed("\(error); a sleep nobody announced is not noticed"))
            resumes = nil
        }
        defer { resumes?.stop() }
        await withDiscardingTaskGroup { group in
            // The stream's iteration ends when the run is cancelled.
            for await next in events {
                guard case .machine(let event) = next else {
                    await follow(next, machine: machine, loop: &loop, group: &group)
                    continue
                }
                for action in machine.handle(event) { await perform(action, loop: &loop, group: &group) }
                state.withLock {
                    $0.heldFor = machine.heldFor
                    $0.preparation = machine.options.preparation
                }
            }
            group.cancelAll()
        }
        loop.alarm?.disarm()
        for (mode, lock) in loop.locks.all { say(released: lock, mode: mode, since: loop.locks.since[mode] ?? .zero, why: "the service stops") }
        await releaseWakelock(why: "the service stops", loop: &loop)
    }

    /// The wake alarm, when any work may wake the device (`nil`, said, without `CAP_WAKE_ALARM`).
    /// With a wakelock, each wake of the alarm is held from its first moment until the work's
    /// wakelock holds it: a suspender that sleeps whenever no wakelock is held would otherwise
    /// put the device back to sleep before the service has run.
    private func openAlarm(bridgedBy wakelock: KernelWakelock?) -> WakeAlarm? {
        guard !configuration.options.wakes.isEmpty else { return nil }
        let alarm: WakeAlarm
        do throws(SleepError) {
            alarm = try WakeAlarm()
        } catch {
            notice(.failed("\(error); nothing wakes the device"))
            return nil
        }
        guard let wakelock else { return alarm }
        do throws(SleepError) {
            try alarm.watchExpiries { wakelock.bridge() }
        } catch {
            notice(.failed("\(error); a suspender may put the device back to sleep before a wake's work holds it"))
        }
        return alarm
    }

    /// logind and the wakelock, as ``Configuration/way`` asks and the system offers: a way named
    /// is needed, `auto` takes what there is.
    private func openWays() throws(SleepError) -> (logind: Logind?, wakelock: KernelWakelock?) {
        let way = configuration.way
        var logind: Logind?
        var missing: [String] = []
        if way.usesLogind {
            do throws(SleepError) {
                logind = try connect()
            } catch {
                if way != .auto { throw error }
                missing.append(error.reason)
            }
        }
        var wakelock: KernelWakelock?
        if way.usesWakelocks, way != .auto || KernelWakelock.isOffered(in: configuration.wakelockDirectory) {
            do throws(SleepError) {
                let notice = notice
                wakelock = try KernelWakelock(
                    name: configuration.wakelockName, directory: configuration.wakelockDirectory, timeout: configuration.wakelockTimeout
                ) { notice(.failed($0)) }
            } catch {
                if way != .auto {
                    logind?.stop()
                    throw error
                }
                missing.append(error.reason)
            }
        } else if way.usesWakelocks {
            missing.append("the kernel offers no wakelocks (\(configuration.wakelockDirectory)/wake_lock)")
        }
        guard logind != nil || wakelock != nil else { throw .setup("neither logind nor the kernel's wakelocks: \(missing.joined(separator: "; "))") }
        return (logind, wakelock)
    }

    /// logind's connection lost, made again, or its service restarted: the locks taken again,
    /// the preparation fitted to its delay again.
    private func follow(_ next: Input, machine: DeviceSleepMachine, loop: inout Loop, group: inout DiscardingTaskGroup) async {
        switch next {
        case .machine: break
        case .lost(let reason):
            notice(.failed("logind's connection ended (\(reason)): connecting again"))
            state.withLock { $0.isFollowed = false }
            group.addTask { await self.reconnect() }
        case .connected(let again):
            loop.logind?.stop()
            loop.logind = again
            state.withLock { $0.isFollowed = true }
            await relock(machine, loop: &loop, why: "connected to logind again")
            await fitPreparation(to: again)
        case .restarted:
            await relock(machine, loop: &loop, why: "logind restarted")
            if let logind = loop.logind { await fitPreparation(to: logind) }
        }
    }

    /// The preparation within logind's delay as it says it now (a system's InhibitDelayMaxSec
    /// may be shorter than the preparation asked, and a restart of logind's may change it).
    private func fitPreparation(to logind: Logind) async {
        if let delay = await logind.currentInhibitDelayMax() { input.yield(.machine(.logindDelay(delay))) }
    }

    /// logind on the system bus, its signals told to the loop.
    private func connect() throws(SleepError) -> Logind {
        let input = input
        return try Logind { signal in
            let now = BootClock.now()
            switch signal {
            case .prepareForSleep(true): input.yield(.machine(.sleepAnnounced(now: now)))
            case .prepareForSleep(false):
                input.yield(.machine(.resumed(now: now)))
                // The time asleep from here on is counted from the end of this sleep.
                input.yield(.timeAsleep(now: now))
            case .session(let session): input.yield(.machine(.session(session, now: now)))
            case .restarted: input.yield(.restarted)
            case .lost(let reason): input.yield(.lost(reason))
            }
        }
    }

    /// Connects again after the bus was lost: after 1 s, then each time twice as long (at most
    /// a minute), until it works or the run ends.
    private func reconnect() async {
        var wait = Duration.seconds(1)
        while (try? await Task.sleep(for: wait)) != nil {
            if let logind = try? connect() {
                input.yield(.connected(logind))
                return
            }
            wait = min(wait * 2, .seconds(60))
        }
    }

    /// Takes again the locks the rules hold (the new one before the old goes: a lock logind
    /// kept across its restart is never missing meanwhile), and says so.
    private func relock(_ machine: DeviceSleepMachine, loop: inout Loop, why: String) async {
        notice(.relocked(why))
        if let reason = machine.heldFor { await take(.block, why: reason, loop: &loop) }
        if machine.holdsDelayLock { await take(.delay, why: Self.delayReason, loop: &loop) }
    }

    private static let delayReason = "commit the journal and deliver before the device sleeps"

    private func perform(_ action: DeviceSleepMachine.Action, loop: inout Loop, group: inout DiscardingTaskGroup) async {
        let input = input
        switch action {
        case .holdAwake(let reason):
            await holdWakelock(why: reason, loop: &loop)
            await take(.block, why: reason, loop: &loop)
        case .letSleep(let reason):
            if let lock = loop.locks.remove(.block) { say(released: lock.lock, mode: .block, since: lock.since, why: reason) }
            await releaseWakelock(why: reason, loop: &loop)
        case .takeDelayLock:
            await take(.delay, why: Self.delayReason, loop: &loop)
        case .releaseDelayLock:
            if let lock = loop.locks.remove(.delay) { say(released: lock.lock, mode: .delay, since: lock.since, why: "ready for the sleep") }
        case .prepare(let bound):
            state.withLock { $0.sleeps += 1 }
            let preparation = SleepPreparation()
            loop.preparation = preparation
            group.addTask { [hands] in
                await preparation.run { await hands.prepareForSleep(within: bound) }
                input.yield(.machine(.prepared(now: BootClock.now())))
            }
        case .resume(let asleep):
            // A preparation still under way (the sleep did not wait for it) is cut short and
            // its end awaited: nothing it does (delivery's pause) may land after the resume.
            if let preparation = loop.preparation.take() { await preparation.cut() }
            // Before a wake's work: the gap comes before the wake's first fix.
            await hands.resumed(asleep: asleep)
        case .armAlarm(let time, let kind):
            do throws(SleepError) {
                try loop.alarm?.arm(at: time)
                state.withLock { $0.alarm = DeviceSleepMachine.Alarm(kind: kind, at: time) }
            } catch {
                notice(.failed("\(error)"))
            }
        case .disarmAlarm:
            loop.alarm?.disarm()
            state.withLock { $0.alarm = nil }
        case .runWork(let kind):
            state.withLock { $0.wakes[kind, default: 0] += 1 }
            let bound = configuration.options.fixWait
            group.addTask { [hands] in
                let fixed = await hands.runWork(kind, within: bound)
                input.yield(.machine(fixed ? .fixArrived(now: BootClock.now()) : .fixGivenUp(now: BootClock.now())))
            }
        case .deliverNow:
            let bound = state.withLock { $0.preparation }
            group.addTask { [hands] in
                await hands.deliverNow(within: bound)
                input.yield(.machine(.workDone(now: BootClock.now())))
            }
        case .sleepAgain(let wokeAt):
            // The wake's time on the monotonic clock (no sleep since: the same awake stretch).
            // With wakelocks alone, the wakelock's release (the action before) is the step: the
            // system's suspender sleeps when no other holds the device.
            let since = BootClock.monotonic() - (BootClock.now() - wokeAt)
            guard let logind = loop.logind else { break }
            let answer = await logind.suspendIfIdle(
                since: since, ownWakelock: loop.wakelock?.name, wakelockDirectory: configuration.wakelockDirectory
            )
            say(answer, loop: &loop)
        case .scheduleTimer(let time):
            group.addTask {
                // A timer replaced by a later one still fires: the machine ignores it then.
                guard (try? await Task.sleep(for: max(.zero, time - BootClock.now()))) != nil else { return }
                // A sleep nobody announced is told before the time it passed: the timer of
                // work due awake may fire on a resume before the kernel's word of it comes.
                input.yield(.timeAsleep())
                input.yield(.machine(.timerFired(now: BootClock.now())))
            }
        case .say(let said):
            switch said {
            case .session(let session): state.withLock { $0.session = session }
            case .sleptUnannounced: state.withLock { $0.sleeps += 1 }  // an announced one counts at its preparation
            default: break
            }
            notice(said)
        }
    }

    /// What a back-to-sleep came to. Held by others: said once while the same ones hold the
    /// device (a wake each minute under an hour's upgrade says it once), and logind's idle
    /// action decides.
    private func say(_ answer: Logind.SuspendAnswer, loop: inout Loop) {
        switch answer {
        case .heldByAnother(let who):
            if loop.heldBy != who { notice(.heldByAnother(who: who)) }
            loop.heldBy = who
        case .asked:
            loop.heldBy = nil
            notice(.backToSleep(refused: nil))
        case .refused(let why):
            loop.heldBy = nil
            notice(.backToSleep(refused: why))
        }
    }

    /// Takes logind's lock of `mode` (when logind is followed).
    private func take(_ mode: InhibitorLock.Mode, why: String, loop: inout Loop) async {
        guard let logind = loop.logind else { return }
        do throws(SleepError) {
            let lock = try await logind.inhibit(mode, who: configuration.who, why: why)
            notice(.lockTaken(mode, why: why))
            // The new lock first: the device is never left without one between the two.
            if let old = loop.locks.remove(mode) { old.lock.release() }
            loop.locks.add(lock, mode: mode, at: BootClock.now())
        } catch {
            notice(.failed("\(error)"))
        }
    }

    /// Holds the wakelock (when wakelocks are followed), renewed until released.
    private func holdWakelock(why: String, loop: inout Loop) async {
        guard let wakelock = loop.wakelock else { return }
        if let refused = await wakelock.hold() {
            notice(.failed("cannot hold the wakelock \(wakelock.name): \(refused)"))
            return
        }
        if loop.wakelockSince == nil { loop.wakelockSince = BootClock.now() }
        notice(.wakelockTaken(wakelock.name, why: why))
    }

    /// Releases the wakelock if it is held.
    private func releaseWakelock(why: String, loop: inout Loop) async {
        guard let wakelock = loop.wakelock, let since = loop.wakelockSince.take() else { return }
        if let refused = await wakelock.release() { notice(.failed("cannot release the wakelock \(wakelock.name): \(refused)")) }
        notice(.wakelockReleased(wakelock.name, why: why, held: BootClock.now() - since))
    }

    private func say(released lock: InhibitorLock, mode: InhibitorLock.Mode, since: Duration, why: String) {
        lock.release()
        notice(.lockReleased(mode, why: why, held: BootClock.now() - since))
    }
}

/// What the keeper's loop takes: the machine's events, and logind's connection lost, made
/// again, or its service restarted.
private enum Input: Sendable {
    case machine(DeviceSleepMachine.Event)
    case lost(String)
    case connected(Logind)
    case restarted

    /// The time asleep since boot as it reads now (the machine's ``DeviceSleepMachine/Event/timeAsleep(total:now:)``).
    static func timeAsleep(now: Duration = BootClock.now()) -> Input {
        .machine(.timeAsleep(total: BootClock.asleepSinceBoot(), now: now))
    }
}

/// What the keeper's loop holds: logind's connection and the locks taken on it, the wakelock
/// and since when it is held, the wake alarm.
private struct Loop {
    var logind: Logind?
    let wakelock: KernelWakelock?
    var wakelockSince: Duration?
    let alarm: WakeAlarm?
    var locks = HeldLocks()
    /// The last sleep's preparation, until a resume takes it.
    var preparation: SleepPreparation?
    /// Who else held the device when a back-to-sleep last found it held (said once while they do).
    var heldBy: [String]?
}

/// The locks a keeper holds, with when each was taken.
private struct HeldLocks {
    private(set) var locks: [InhibitorLock.Mode: InhibitorLock] = [:]
    private(set) var since: [InhibitorLock.Mode: Duration] = [:]

    var all: [(InhibitorLock.Mode, InhibitorLock)] { locks.map { ($0.key, $0.value) } }

    mutating func add(_ lock: InhibitorLock, mode: InhibitorLock.Mode, at time: Duration) {
        locks[mode] = lock
        since[mode] = time
    }

    mutating func remove(_ mode: InhibitorLock.Mode) -> (lock: InhibitorLock, since: Duration)? {
        guard let lock = locks.removeValue(forKey: mode) else { return nil }
        return (lock, since.removeValue(forKey: mode) ?? .zero)
    }
}
