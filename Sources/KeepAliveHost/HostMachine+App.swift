import KeepAliveCore
import KeepAliveHostProtocol
import KeepAliveSleep

extension HostMachine {
    /// One app under the host, the one value that decides for it: its model (the same
    /// ``Application`` the simulator runs: its rules, budgets and graces, moved forward by the
    /// host's machine alone, to the time of each event), its own machine (``HostedAppMachine``:
    /// freezes, wakes, notices, launches) and what the host said of its processes and its
    /// connection. The host holds only the handles: the processes, the group, the connection.
    struct App {
        let id: String
        /// Its rules. Changed by the host only through ``HostMachine/change(_:now:_:)``.
        let model: Application
        /// Its decisions: the current launch's.
        private(set) var machine: HostedAppMachine
        /// Its first process runs: from the end of a launch (or an adoption) to its exit.
        private(set) var isRunning: Bool
        /// The kernel tells its exit (a pidfd): else the host looks for it.
        private(set) var isExitTold: Bool
        /// The host knows how to launch it (it launched it, or read its launch record).
        let isLaunchable: Bool
        /// Its group is frozen or being frozen: from a freeze decided to the end of a thaw.
        private(set) var isFreezeRequested = false
        /// It has conditions for the host to watch.
        private(set) var hasConditions = false
        /// It said hello on a connection still open.
        var isConnected = false
        /// What it reported, and what ALSA shows of it: its model's audio follows both
        /// (``followAudio()``), its location activity its report.
        var reportsAudio = false
        var observesAudio = false
        var reportsLocation = false
        /// Its task numbers (the protocol's), to its model's identifiers.
        var tasks: [Int: BackgroundTaskIdentifier] = [:]
        /// Its model's events since they were last decided.
        let modelEvents = ModelEvents()

        /// - Parameters:
        ///   - isRunning: its first process runs (adopted, or found in its session).
        ///   - isExitTold: a pidfd tells its exit (not an adopted app's: not the host's child).
        ///   - isLaunchable: the host knows how to launch it.
        init(id: String, model: Application, machine: HostedAppMachine, isRunning: Bool = false, isExitTold: Bool = false, isLaunchable: Bool) {
            (self.id, self.model, self.machine) = (id, model, machine)
            (self.isRunning, self.isExitTold, self.isLaunchable) = (isRunning, isRunning && isExitTold, isLaunchable)
            _ = model.addObserver { [modelEvents] in modelEvents.queue.append($0) }
        }

        /// What its own machine decides on, now.
        func facts(at now: Duration) -> HostedAppMachine.Facts {
            HostedAppMachine.Facts(
                now: now, state: model.state, isRunning: isRunning, isConnected: isConnected,
                isFreezeRequested: isFreezeRequested, isLaunchable: isLaunchable
            )
        }

        /// Its model's audio assertion, as its report and ALSA say it plays.
        func followAudio() {
            let playing = reportsAudio || observesAudio
            if playing, model.audioPlaybackCount == 0 {
                try? model.beginAudioPlayback()
            } else if !playing, model.audioPlaybackCount > 0 {
                model.endAudioPlayback()
            }
        }

        /// Its report of location activity (`location`), which keeps it running with always.
        ///
        /// - Returns: why its model refused it (not authorized, no location mode), if it did.
        mutating func reportLocation(_ active: Bool) -> BackgroundError? {
            reportsLocation = active
            if active {
                do throws(BackgroundError) { try model.beginLocationActivity() } catch { return error }
            } else if model.locationActivityCount > 0 {
                model.endLocationActivity()
            }
            return nil
        }

        /// What it reported ends with its connection; its tasks stay, and expire as the model says.
        mutating func disconnected() {
            isConnected = false
            reportsAudio = false
            followAudio()
            if reportsLocation, model.locationActivityCount > 0 { model.endLocationActivity() }
            reportsLocation = false
        }

        /// Not running, and the host may launch it (not quit by its user, not being launched, known how).
        var mayBeLaunched: Bool { machine.mayBeLaunched(facts(at: model.now)) }

        /// Its model runs scheduled work, or it is being launched for some.
        var runsScheduledWork: Bool { model.runningScheduledTask != nil || machine.isLaunching }

        /// Frozen or not running: its work wakes the device, it does not hold it.
        var isIdle: Bool { model.state == .suspended || mayBeLaunched }

        /// The host watches its conditions now: its machine's rule, on its authorization and state.
        var watchesConditions: Bool {
            hasConditions && machine.watchesConditions(facts(at: model.now), authorization: model.authorization)
        }

        /// What the device's sleep is told of it.
        var sleepRules: DeviceSleepMachine.AppRules {
            DeviceSleepMachine.AppRules(app: id, state: model.state, authorization: model.authorization, backgroundModes: model.backgroundModes)
        }

        /// Whether something of it changes that nothing tells the host of, now.
        func needsLooking(at now: Duration) -> Bool {
            if isRunning, !isExitTold { return true }  // an exit no pidfd tells
            if model.state.isRunning, model.backgroundModes.contains(.audio) { return true }  // ALSA
            if model.runningScheduledTask?.kind == .processing { return true }  // the power supply
            // Work waiting on power or a network once due, in the app or for its launch.
            let due = model.pendingTaskRequests.filter { ($0.earliestBeginDate ?? .zero) <= now }
            return due.contains { $0.requiresExternalPower || $0.requiresNetworkConnectivity } || (mayBeLaunched && !due.isEmpty)
        }

        /// What the machine's actions change of its group: frozen or being frozen from a freeze
        /// decided to the end of a thaw.
        private mutating func follow(_ actions: [HostedAppMachine.Action]) {
            for action in actions {
                switch action {
                case .freeze, .enforceFreeze: isFreezeRequested = true
                case .thawUnreported, .terminate, .stopToLaunchAgain: isFreezeRequested = false
                default: break
                }
            }
        }

        /// Tells its machine `event` (the host's machine does, the one caller).
        mutating func tell(_ event: HostedAppMachine.Event, at now: Duration) -> [HostedAppMachine.Action] {
            if case .thawed = event { isFreezeRequested = false }
            let actions = machine.handle(event, facts(at: now))
            follow(actions)
            return actions
        }

        /// Its first process runs (`started`), or no longer (the host's machine says it).
        mutating func ran(_ started: Bool, exitTold: Bool) {
            isRunning = started
            isExitTold = started && exitTold
            if !started { isFreezeRequested = false }
        }

        /// It has conditions to watch, or none (the host's machine says it).
        mutating func watches(_ conditions: Bool) { hasConditions = conditions }
    }

    /// A model's events, kept by its observer until the machine decides them.
    final class ModelEvents {
        var queue: [AppEvent] = []

        func next() -> AppEvent? { queue.isEmpty ? nil : queue.removeFirst() }
    }
}
