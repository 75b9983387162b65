import ArgumentParser
import KeepAliveCore
import KeepAliveSleep

/// `keepalive run`'s options for the device's sleep: through what it is followed (logind, the
/// kernel's wakelocks), whether the device is held awake, and how often each kind of work may
/// wake it.
struct DeviceSleepOptions: ParsableArguments {
    /// `--device-sleep`.
    enum Following: String, ExpressibleByArgument, CaseIterable {
        /// Followed through what the system has (logind on the system bus, the kernel's
        /// wakelocks); said once and left alone when it has neither. Not followed by an app of
        /// `keepalive host`.
        case auto
        /// Followed through what the system has; having neither is an error.
        case on
        /// Followed through logind alone; a missing logind is an error.
        case logind
        /// Held with the kernel's wakelocks alone; a kernel without them is an error.
        case wakelocks
        /// Both; either missing is an error.
        case both
        /// Not followed: no lock, no preparation, no wake.
        case off

        /// The keeper's way.
        var way: DeviceSleepWay {
            switch self {
            case .auto, .on, .off: .auto
            case .logind: .logind
            case .wakelocks: .wakelocks
            case .both: .both
            }
        }
    }

    @Option(
        name: .customLong("device-sleep"),
        help: ArgumentHelp(
            "Follow the device's sleep: auto (through logind when it is on the system bus, the kernel's wakelocks when it offers them; for run, not under --host: the host follows it), on (auto, and an error when neither), logind, wakelocks, both (an error when missing), off.",
            valueName: "mode"
        )
    )
    var following: Following = .auto

    @Flag(
        name: .customLong("hold-awake"),
        inversion: .prefixedNo,
        help: "Hold the device awake (a logind sleep lock, a wakelock) while the model lets the app run (a wake's work is held either way)."
    )
    var holdAwake = true

    @Flag(
        name: .customLong("back-to-sleep"),
        inversion: .prefixedNo,
        help: "After a wake's work, ask logind to suspend at once (unless the device was used since, or another lock holds it) rather than wait for its idle action."
    )
    var backToSleep = true

    @Option(
        name: .customLong("wake-budget"),
        help: ArgumentHelp(
            "How often KIND (refresh, monitoring, poll) may wake the sleeping device: KIND=BURST/INTERVAL, or KIND=none (repeat for each kind; defaults refresh=1/15m, monitoring=1/5m, poll=1/10m).",
            valueName: "kind=budget"
        )
    )
    var wakeBudgets: [Parsed<WakeBudgetSetting>] = []

    @Option(
        name: .customLong("wake-fix-wait"),
        help: ArgumentHelp("After a wake, how long to wait for a fix (a receiver that slept needs a warm start).", valueName: "duration")
    )
    var fixWait: Parsed<Duration> = "45s"

    /// The keeper's configuration (`nil`: not followed).
    var configuration: DeviceSleepKeeper.Configuration? {
        guard following != .off else { return nil }
        var configuration = DeviceSleepKeeper.Configuration()
        configuration.isRequired = following != .auto
        configuration.way = following.way
        configuration.options.holdsAwake = holdAwake
        configuration.options.fixWait = fixWait.value
        configuration.options.sleepsAfterWork = backToSleep
        for setting in wakeBudgets.map(\.value) {
            if let budget = setting.budget {
                configuration.options.budgets[setting.kind] = budget
                configuration.options.wakes.insert(setting.kind)
            } else {
                configuration.options.wakes.remove(setting.kind)
            }
        }
        return configuration
    }
}

/// `--wake-budget KIND=BURST/INTERVAL` or `KIND=none`.
struct WakeBudgetSetting: WrittenAsText {
    let kind: WakeKind
    /// `nil`: this kind never wakes the device.
    let budget: WakeBudget?

    init?(parsing text: String) {
        let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.count == 2, let kind = WakeKind(rawValue: parts[0]) else { return nil }
        self.kind = kind
        if parts[1] == "none" {
            budget = nil
        } else {
            guard let budget = WakeBudget(parsing: parts[1]) else { return nil }
            self.budget = budget
        }
    }
}
