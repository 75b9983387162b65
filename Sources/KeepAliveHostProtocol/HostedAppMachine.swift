package import KeepAliveCore

/// The host's decisions for one app, as a value: events in, actions out, on the host's clock
/// (the time since it started), shaped like ``HybridKeepAliveMachine``. While the app lives,
/// the host only does what it returns and tells it what happened: what it decides of the app's
/// ``Application`` model (a wake for an event, a kill, entering the background) the host's own
/// machine does to the model, whose events come back here in the same pass; the rest (freezes,
/// thaws, signals, launches, sends) ``AppHost``'s hands. The app's own rules (budgets, graces,
/// suspension) are its model's. Two ends are the host's own, outside any one app's
/// decisions: the sweep after its first process exited (what its children left running is
/// killed, its group removed, then ``Event/groupRemoved``), and the host's own stop, which tells
/// every machine first (``Event/hostStopping``) and then ends every app at once.
///
/// What it decides:
/// - **Freezing** safely: a suspended app is asked first (`will-suspend`), and frozen once it
///   answered or the notice timed out, unless a newer decision came meanwhile (its
///   ``generation``); one resumed while it froze is thawed at once.
/// - **Wakes**: data on a socket it named, and location events, wake or launch it only as often
///   as its budgets allow; a wake they do not allow waits for the next one they do.
/// - **Notices**: told at once while it runs and is connected, else kept until it is thawed or
///   says hello.
/// - **Launches**: one at a time, never of an app the user quit or the host cannot launch
///   (adopted); an exited app asked to be launched again is, once its group is gone.
package struct HostedAppMachine: Sendable {
    /// What the host knows of the app when an event comes, read off its model and processes.
    package struct Facts: Sendable, Equatable {
        /// The host's clock.
        package var now: Duration
        /// Its model's state.
        package var state: AppState
        /// Whether its first process runs.
        package var isRunning: Bool
        /// Whether it said hello on a connection that is still open.
        package var isConnected: Bool
        /// Whether its group is frozen or being frozen.
        package var isFreezeRequested: Bool
        /// Whether the host knows how to launch it (it launched it, or read its launch record).
        package var isLaunchable: Bool

        package init(now: Duration, state: AppState, isRunning: Bool, isConnected: Bool, isFreezeRequested: Bool, isLaunchable: Bool) {
            (self.now, self.state, self.isRunning, self.isConnected) = (now, state, isRunning, isConnected)
            (self.isFreezeRequested, self.isLaunchable) = (isFreezeRequested, isLaunchable)
        }
    }

    /// What happened.
    package enum Event: Sendable {
        /// Its model changed (``AppEvent``).
        case model(AppEvent)
        /// The `will-suspend` notice of that decision was answered (`answered`: in time; `nil`:
        /// nobody to ask), or its time ran out.
        case noticeSettled(generation: Int, answered: Bool?)
        /// The kernel says its group is frozen, with every process in it.
        case froze(generation: Int)
        /// Its group was thawed (`wasFrozen`: it had been frozen; else nothing was to thaw).
        case thawed(generation: Int, wasFrozen: Bool)
        /// Data came on a socket it named while it was frozen.
        case dataArrived(generation: Int)
        /// The kernel says its frozen group changed: a process left or ended, or something thawed it.
        case groupChanged(generation: Int)
        /// Processes of its were found outside its group (each described: pid, command, where).
        case escaped([String])
        /// One of its conditions changed state: `notice` is what it is told.
        case locationEvent(HostNotice)
        /// It said hello.
        case saidHello
        /// A launch in the background found no hello in time.
        case noHello
        /// Its scheduled work is due while it is not running.
        case scheduledWorkDue
        /// The user quit it (`terminate`).
        case quitByUser
        /// A launch the host began failed; `waiting` are the notices the failed launch held.
        case launchFailed(waiting: [HostNotice])
        /// A new launch of it took over its notices.
        case handedOver
        /// This launch's first process runs in its group (the spawn, awaited off the host's
        /// executor, is done).
        case started
        /// Its processes are gone and its group removed.
        case groupRemoved
        /// Time passed: wakes put off may be due.
        case tick
        /// The host stops it: no freeze or thaw decided before goes ahead.
        case hostStopping
        /// It asked for scheduled work at `asked`: a wake of its own, begun no sooner than its
        /// event budget allows (``nextWake(for:from:)``), and counted against it.
        case scheduled(askedFor: Duration)
        /// An adopted app's launch record was read: whether its user had quit it.
        case recordRead(quitByUser: Bool)
    }

    /// What the host does.
    package enum Action: Sendable, Equatable {
        /// Send `will-suspend` and wait, at most the notice timeout, for its `ack`; then
        /// ``Event/noticeSettled(generation:answered:)``.
        case askBeforeFreezing(generation: Int)
        /// Freeze its group (`answered`: as the notice was); then ``Event/froze(generation:)``.
        case freeze(generation: Int, answered: Bool?)
        /// Make sure every process is in its frozen group and the group frozen: one that left
        /// gets it killed; one thawed by someone else is frozen again, unless a newer decision
        /// came before it was done; then ``Event/froze(generation:)``.
        case enforceFreeze(generation: Int)
        /// Thaw its group; then ``Event/thawed(generation:wasFrozen:)``.
        case thaw(generation: Int)
        /// Undo a freeze that came after it was killed, unreported.
        case thawUnreported
        /// While frozen: watch its group (the kernel's events) and the sockets it named.
        case watchWhileFrozen(generation: Int)
        /// Stop watching its group and sockets.
        case stopWatching
        /// Stop watching the sockets it named (data came).
        case stopWatchingSockets
        /// End a wait for its answer to `notice` (the decision it was for is gone).
        case endWait(HostNotice.Kind)
        /// Send these notices.
        case send([HostNotice])
        /// Its model resumes for the event budget (``Application/wakeForLocationEvent()``).
        case wakeForEvent
        /// Launch it again, in the background, for `reason` (`KEEPALIVE_LAUNCH_REASON`).
        case launch(reason: String)
        /// Stop it (SIGTERM, then SIGKILL after the grace) to launch it again once gone: an
        /// adopted app not connected to this host cannot be told.
        case stopToLaunchAgain
        /// Its model terminates it: thaw, tell it, SIGTERM, SIGKILL after the grace.
        case terminate
        /// Its model killed it: SIGKILL everything, close the sockets it named.
        case kill
        /// SIGKILL its processes outside its group, until none is left.
        case killEscapes
        /// Its model kills it, for `reason` (it broke the system's rules).
        case killModel(TerminationReason)
        /// Its model enters the background, awaiting the app's handler (`false`: at once), and
        /// then, `withEventBudget`, gets the event budget it was launched for.
        case enterBackground(awaitingHandler: Bool, withEventBudget: Bool)
        /// Say that data woke it.
        case reportWokenForData
        /// Say that a wake for `cause` waits `after`.
        case reportPutOff(WakeCause, after: Duration)
        /// Say how a location event (its notice) was delivered.
        case reportDelivery(LocationEventDelivery, HostNotice)
    }

    /// Found running when the host started (left by one that died): not its child.
    package let isAdopted: Bool
    /// Bumped by every freeze or thaw decision: a step of an older one is dropped.
    package private(set) var generation = 0
    /// Quit by the user: not launched again for events or tasks until the user launches it.
    package private(set) var isQuitByUser = false
    /// A launch for an event or a task is under way.
    package private(set) var isLaunching = false
    /// This launch's process is being spawned: it does not run yet, and is not launched again.
    package private(set) var isStarting = false
    /// Launched again for this reason once its processes are gone and its group removed.
    package private(set) var launchAgainFor: String?
    /// Launched in the background: it enters it once it has said hello and handled it.
    package private(set) var entersBackgroundOnHello: Bool
    /// Launched for a location event: it gets the event's budget once in the background.
    private var launchedForEvent: Bool
    /// Pushes: woken at most as often as this allows.
    package private(set) var dataWakes: WakeBudget
    /// Location events and scheduled tasks that wake or launch it.
    package private(set) var eventWakes: WakeBudget
    /// Wakes its budgets put off, done at the next wake they allow.
    package private(set) var waitingWakes: Set<WakeCause> = []
    /// Notices waiting for it to be thawed or to say hello.
    package private(set) var pending: [HostNotice] = []
    /// The decision whose thaw is under way: a freeze decided meanwhile waits for it, so that
    /// the group is never frozen before a thaw still writing the kernel's files (which would
    /// leave it running) and the thaw is said before the freeze.
    private var thawing: Int?
    /// A freeze decided while a thaw was under way, done once it is.
    private var freezeAfterThaw: (generation: Int, answered: Bool?)?
    /// The decision whose freeze was last decided (under way or done): an older freeze that
    /// ends after it leaves the group frozen, as this one wants it.
    private var freezeDecided: Int?
    /// The decision whose resume it was last told: a second thaw for it (after an older
    /// freeze that ended late) says nothing more.
    private var resumeTold: Int?

    /// A launch of its: `reason` is why the host launched it (`nil`: the user did);
    /// `previous` is its launch before, whose budgets, wakes and notices go on.
    package init(
        launchedFor reason: String?,
        inBackground: Bool,
        dataWakes: WakeBudget,
        eventWakes: WakeBudget,
        continuing previous: HostedAppMachine? = nil
    ) {
        isAdopted = false
        isStarting = true
        entersBackgroundOnHello = inBackground
        launchedForEvent = reason == HostNotice.Kind.locationEvent.rawValue
        self.dataWakes = previous?.dataWakes ?? dataWakes
        self.eventWakes = previous?.eventWakes ?? eventWakes
        if let previous {
            waitingWakes = previous.waitingWakes.subtracting([.data])  // its sockets were the old process's
            pending = previous.pending
        }
    }

    /// An app the host did not launch: adopted (running), or known from its launch record
    /// (not running, `quitByUser` as recorded).
    package init(adopted: Bool, quitByUser: Bool = false, dataWakes: WakeBudget, eventWakes: WakeBudget) {
        isAdopted = adopted
        isQuitByUser = quitByUser
        entersBackgroundOnHello = false
        launchedForEvent = false
        self.dataWakes = dataWakes
        self.eventWakes = eventWakes
    }

    /// Not running, and the host may launch it for its events and due tasks.
    package func mayBeLaunched(_ facts: Facts) -> Bool { !facts.isRunning && !isStarting && !isQuitByUser && facts.isLaunchable }

    /// The first time from `now` on its budget for `cause` allows a wake.
    package func nextWake(for cause: WakeCause, from now: Duration) -> Duration {
        (cause == .data ? dataWakes : eventWakes).nextWake(from: now)
    }

    /// Whether the host watches its conditions now (it has some): while it runs (when in use:
    /// in the foreground), and with always while it may be launched for them (not after its
    /// user quit it, as iOS does not relaunch an app the user quit).
    package func watchesConditions(_ facts: Facts, authorization: LocationAuthorization) -> Bool {
        guard facts.isRunning else { return authorization == .always && mayBeLaunched(facts) }
        return authorization.allowsLocation(in: facts.state)
    }

    /// Whether the decision `step` still wants the app frozen: the newest, and it suspended.
    package func holdsFreeze(_ step: Int, _ facts: Facts) -> Bool { step == generation && facts.state == .suspended }

    /// When the earliest wake put off falls due, if any.
    package func nextWaitingWake(from now: Duration) -> Duration? {
        waitingWakes.map { nextWake(for: $0, from: now) }.min()
    }

    /// What to do for `event`.
    package mutating func handle(_ event: Event, _ facts: Facts) -> [Action] {
        switch event {
        case .model(let change): return modelChanged(change, facts)
        case .noticeSettled(let step, let answered): return noticeSettled(step, answered: answered, facts)
        case .froze(let step): return froze(step, facts)
        case .thawed(let step, let wasFrozen): return thawed(step, wasFrozen: wasFrozen, facts)
        case .dataArrived(let step):
            guard step == generation, facts.state == .suspended else { return [] }
            return [.stopWatchingSockets] + wake(for: .data, facts)
        case .groupChanged(let step):
            return holdsFreeze(step, facts) ? [.enforceFreeze(generation: step)] : []
        case .escaped(let escapes):
            // As the system kills an app that breaks its rules: what escaped first (it runs), then the app.
            guard facts.state != .notRunning, !escapes.isEmpty else { return [] }
            return [.killEscapes, .killModel(.misbehaved(escapes.joined(separator: "; ")))]
        case .locationEvent(let notice): return locationEvent(notice, facts)
        case .saidHello:
            var actions: [Action] = []
            if entersBackgroundOnHello {
                entersBackgroundOnHello = false
                actions.append(.enterBackground(awaitingHandler: true, withEventBudget: takeEventBudget()))
            }
            return actions + flush(facts)
        case .noHello:
            guard entersBackgroundOnHello else { return [] }
            entersBackgroundOnHello = false
            return [.enterBackground(awaitingHandler: false, withEventBudget: takeEventBudget())]
        case .scheduledWorkDue:
            return mayBeLaunched(facts) ? launch(for: "scheduled-task", facts) : []
        case .quitByUser:
            isQuitByUser = true
            return []
        case .launchFailed(let waiting):
            isLaunching = false
            pending = waiting
            return []
        case .handedOver:
            pending.removeAll()
            return []
        case .started:
            isStarting = false
            return []
        case .groupRemoved:
            guard !facts.isRunning, let reason = launchAgainFor else { return [] }
            launchAgainFor = nil
            return mayBeLaunched(facts) ? launch(for: reason, facts) : []
        case .tick: return serveWaitingWakes(facts)
        case .hostStopping:
            generation += 1
            return []
        case .scheduled(let asked):
            eventWakes.spend(at: nextWake(for: .event, from: asked))
            return []
        case .recordRead(let quitByUser):
            isQuitByUser = quitByUser
            return []
        }
    }

    private mutating func modelChanged(_ change: AppEvent, _ facts: Facts) -> [Action] {
        switch change {
        case .willEnterForeground:
            return [.send([.lifecycle(.foreground)])]
        case .suspended:
            generation += 1
            return [.askBeforeFreezing(generation: generation)]
        case .resumed:
            generation += 1
            return [.stopWatching, .endWait(.willSuspend), thaw()]
        case .willTerminate:
            generation += 1
            return [.terminate]
        case .terminated:
            generation += 1
            return [.stopWatching, .kill]
        default:
            return []
        }
    }

    private mutating func noticeSettled(_ step: Int, answered: Bool?, _ facts: Facts) -> [Action] {
        guard step == generation, facts.state == .suspended else { return [] }
        guard thawing == nil else {
            freezeAfterThaw = (step, answered)
            return []
        }
        return [freeze(answered: answered)]
    }

    private mutating func thawed(_ step: Int, wasFrozen: Bool, _ facts: Facts) -> [Action] {
        if thawing == step { thawing = nil }
        // Suspended again meanwhile, or thawed so that it could answer the notice of a
        // suspension an older freeze got ahead of: its freeze goes now, once no thaw is
        // under way (an older thaw's end is not the newer one's).
        if thawing == nil, let waiting = freezeAfterThaw {
            freezeAfterThaw = nil
            if waiting.generation == generation, facts.state == .suspended { return [freeze(answered: waiting.answered)] }
        }
        guard step == generation else { return [] }
        guard wasFrozen, facts.state != .suspended, resumeTold != step else { return flush(facts, thawed: true) }
        resumeTold = step
        return [.send([.didResume])] + flush(facts, thawed: true)
    }

    private mutating func froze(_ step: Int, _ facts: Facts) -> [Action] {
        // Killed while it froze: its stop thawed the group already; the freeze that came after is undone.
        guard facts.state != .notRunning else { return [.thawUnreported] }
        guard step != generation else { return [.watchWhileFrozen(generation: step)] }
        // An older freeze, done late (a loaded host): resumed since, thawed at once; suspended
        // again and that freeze decided too, left frozen. A thaw now would race that freeze,
        // and, done after it, leave the suspended app running (HostScheduledWorkTests under
        // ThreadSanitizer beside a busy loop).
        if facts.state == .suspended, freezeDecided == generation { return [] }
        return [thaw()]
    }

    /// A freeze for the current decision.
    private mutating func freeze(answered: Bool?) -> Action {
        freezeDecided = generation
        return .freeze(generation: generation, answered: answered)
    }

    /// A thaw for the current decision, marked under way until ``Event/thawed(generation:wasFrozen:)``.
    private mutating func thaw() -> Action {
        thawing = generation
        return .thaw(generation: generation)
    }

    /// Whether it gets the event budget, once in the background: once, when launched for a
    /// location event, as a woken app gets it.
    private mutating func takeEventBudget() -> Bool {
        defer { launchedForEvent = false }
        return launchedForEvent
    }

    /// Sends what waits, once it is connected, running and not frozen (`thawed`: its group
    /// was just thawed, whatever the facts read before).
    private mutating func flush(_ facts: Facts, thawed: Bool = false) -> [Action] {
        guard facts.isConnected, facts.isRunning, thawed || !facts.isFreezeRequested, !pending.isEmpty else { return [] }
        defer { pending.removeAll() }
        return [.send(pending)]
    }

    private mutating func launch(for reason: String, _ facts: Facts) -> [Action] {
        guard !isLaunching, facts.isLaunchable else { return [] }
        isLaunching = true
        return [.launch(reason: reason)]
    }

    /// A wake the budget for `cause` allows now, or its putting off.
    private mutating func wake(for cause: WakeCause, _ facts: Facts) -> [Action] {
        guard nextWake(for: cause, from: facts.now) <= facts.now else { return putOff(cause, facts) }
        spend(cause, facts.now)
        return cause == .data ? [.wakeForEvent, .reportWokenForData] : [.wakeForEvent]
    }

    private mutating func spend(_ cause: WakeCause, _ now: Duration) {
        switch cause {
        case .data: dataWakes.spend(at: now)
        case .event: eventWakes.spend(at: now)
        }
    }

    private mutating func putOff(_ cause: WakeCause, _ facts: Facts) -> [Action] {
        guard waitingWakes.insert(cause).inserted else { return [] }
        return [.reportPutOff(cause, after: nextWake(for: cause, from: facts.now) - facts.now)]
    }

    /// Tells it: at once while it runs, after the thaw when frozen, after its hello when
    /// launched for it; later, when its budget says so.
    private mutating func locationEvent(_ notice: HostNotice, _ facts: Facts) -> [Action] {
        pending.append(notice)
        // Adopted from a host that died, and not connected to this one: it cannot be told.
        let isUnreachable = isAdopted && !facts.isConnected && facts.isLaunchable && !isQuitByUser
        let mustWake = !facts.isRunning || facts.state == .suspended || isUnreachable
        let now = facts.now
        if mustWake, waitingWakes.contains(.event) || nextWake(for: .event, from: now) > now {
            return putOff(.event, facts) + [.reportDelivery(.deferred, notice)]
        }
        if isUnreachable {
            spend(.event, now)
            launchAgainFor = HostNotice.Kind.locationEvent.rawValue
            return [.stopToLaunchAgain, .reportDelivery(.launched, notice)]
        }
        if !facts.isRunning {  // watched only when it may be launched
            spend(.event, now)
            return launch(for: HostNotice.Kind.locationEvent.rawValue, facts) + [.reportDelivery(.launched, notice)]
        }
        guard facts.state == .background || facts.state == .suspended else {
            return flush(facts) + [.reportDelivery(.told, notice)]
        }
        if mustWake { spend(.event, now) }
        return [.wakeForEvent] + flush(facts) + [.reportDelivery(.woken, notice)]
    }

    /// Does the wakes put off that the budgets now allow (or that need no wake any more).
    private mutating func serveWaitingWakes(_ facts: Facts) -> [Action] {
        let now = facts.now
        var actions: [Action] = []
        if waitingWakes.contains(.data) {
            if facts.state != .suspended || !facts.isRunning {
                waitingWakes.remove(.data)  // it runs, and reads its data itself
            } else if nextWake(for: .data, from: now) <= now {
                waitingWakes.remove(.data)
                actions += wake(for: .data, facts)
            }
        }
        guard waitingWakes.contains(.event) else { return actions }
        if !facts.isRunning {
            guard mayBeLaunched(facts) else {
                waitingWakes.remove(.event)
                return actions
            }
            guard nextWake(for: .event, from: now) <= now else { return actions }
            waitingWakes.remove(.event)
            spend(.event, now)
            return actions + launch(for: HostNotice.Kind.locationEvent.rawValue, facts)
        }
        if facts.state == .suspended {
            guard nextWake(for: .event, from: now) <= now else { return actions }
            waitingWakes.remove(.event)
            spend(.event, now)
            return actions + [.wakeForEvent] + flush(facts)
        }
        waitingWakes.remove(.event)
        return actions + flush(facts)
    }
}

/// What woke, or would wake, an app that is not its user's doing.
package enum WakeCause: String, Hashable, CaseIterable, Sendable {
    case data = "data on a socket it named"
    case event = "a location event"
}
