public import FoundationEssentials
import Glibc
public import KeepAliveCore
import KeepAliveHostProtocol
public import KeepAliveMonitoring
public import KeepAliveSleep

extension AppHost {
    /// How the host runs: its rules, freezer, socket and timings.
    public struct Configuration: Sendable {
        /// The rules every app runs under.
        public var profile: ExecutionProfile = .ios13
        /// The freezer to use, or `nil` for the first that works here.
        public var freezer: FreezerKind?
        /// The folder the host's cgroups live in: one per host.
        public var name = "keepalive.host"
        /// The control socket.
        public var socket: URL
        var socketPath: String { socket.path }
        /// The socket's permission bits: 0600, or 0660 for ``socketGroup``.
        public var socketMode: UInt32 = 0o600
        /// The group whose members may use the socket besides the host's user and root (the
        /// socket is given to it); `nil`: the host's own. A member launches apps as itself.
        public var socketGroup: String?
        /// Who an app runs as when a root caller names nobody (`--app-user`); `nil`: a root
        /// caller must name the user, or the launch is refused.
        public var defaultUser: String?
        /// Whether a root caller may run an app as root (`launch --user root`). Nothing keeps such
        /// an app in its group: the host finds one that left and kills it, but cannot prevent it.
        public var allowsRootApps = false
        /// Whether, with the signal freezer, apps may run as users other than the host's. Off by
        /// default: with signals an app leaves its session with `setsid` and runs on unfrozen.
        public var allowsSignalsForOtherUsers = false
        /// Where the host reads an app's authorization (the app cannot claim it).
        public var authorizationFile: @Sendable (String) -> AuthorizationFile = { .defaultFile(for: $0) }
        /// How long an app may take to answer the will-suspend notice before it is frozen anyway.
        public var noticeTimeout: Duration = .milliseconds(500)
        /// Added to the audio and location graces: what an app reports reaches the host a
        /// little late (a socket, a thread), so a tick that comes exactly at the end of the
        /// grace, as the hybrid driver's 10 s interval against a 10 s grace does, is not lost
        /// to that delay (without it, measured: frozen within minutes by a ms of jitter).
        public var reportAllowance: Duration = .milliseconds(100)
        /// How long a terminated app has between SIGTERM and SIGKILL.
        public var terminationGrace: Duration = .seconds(2)
        /// How often the host looks, while something needs looking at: ALSA while an app with
        /// the audio mode runs, the power supply and network while scheduled work waits on them,
        /// an adopted app's group. Otherwise it sleeps until the kernel (an exit, a frozen group
        /// changing), a socket, a fix or the models' next event wakes it.
        public var housekeepingInterval: Duration = .seconds(1)
        /// Where scheduled work's conditions come from (the kernel; a test's own files in tests).
        public var conditions: @Sendable () -> SystemConditions = { SystemConditionsProbe().read() }
        /// The receiver the host watches for its apps' conditions (gpsd at localhost by default).
        public var locationSource: @Sendable () -> any LocationSource = { GPSDSource() }
        /// Where each app's conditions are kept (`APP.json`), so that they outlive the app and
        /// the host; `nil` keeps them in memory.
        public var monitorFolder: URL? = Configuration.defaultMonitorFolder
        /// How the watch rests while the device is stationary; `nil` watches all the time (for a
        /// replay, which plays on whether watched or not).
        public var stationaryPause: StationaryPause? = StationaryPause()
        /// The most conditions one app may have: 1,000 (iOS allows 20 regions), so that one app
        /// cannot make every fix slow for the others.
        public var maximumConditionsPerApp = 1_000
        /// A command to start as the host's watchdog (see ``HostWatchdog``), or `nil` for none:
        /// `keepalive host` starts `keepalive host watchdog`.
        public var watchdog: [String]?
        /// What the host's sockets admit of each app and user.
        public var limits = ControlLimits()
        /// What each app's group may hold: groups inside it and processes.
        public var groupLimits = AppGroupLimits()
        /// How often each app may be woken by data on its sockets (pushes).
        public var dataWakes = WakeBudget.data
        /// How often each app may be woken or launched for location events and scheduled tasks.
        public var eventWakes = WakeBudget.events
        /// Follows the device's sleep through logind for all the apps (``DeviceSleepKeeper``):
        /// one lock while the model lets any of them run, the refresh wake at their scheduled
        /// work's begin date. `nil` (the default): not followed.
        public var deviceSleep: DeviceSleepKeeper.Configuration?

        /// The apps' socket, beside the control socket (`KEEPALIVE_HOST_SOCKET` in each app):
        /// mode 0666, so that apps of any user reach it; it serves `hello` and reports only.
        public var appSocket: URL { URL(fileURLWithPath: appSocketPath) }
        var appSocketPath: String { socketPath + ".apps" }

        /// Where processes stopped with signals are listed, for the watchdog and the next host.
        public var stoppedFile: URL { URL(fileURLWithPath: stoppedPath) }
        var stoppedPath: String { socketPath + ".stopped" }

        /// A configuration with the defaults and this socket.
        public init(socket: URL = Configuration.defaultSocket) {
            self.socket = socket
        }

        /// `/var/lib/location-keepalive/monitors` for root, else
        /// `$XDG_STATE_HOME/location-keepalive/monitors` (`~/.local/state` by default).
        public static var defaultMonitorFolder: URL {
            if getuid() == 0 { return URL(fileURLWithPath: "/var/lib/location-keepalive/monitors") }
            return BaseDirectory.state().appendingPathComponent("location-keepalive/monitors")
        }

        /// ``HostProtocol/defaultSocket``.
        public static var defaultSocket: URL { HostProtocol.defaultSocket }
    }
}

extension AppHost.Configuration {
    /// Takes what a reload changes (``AppHost/reload(_:)``) from `new`.
    mutating func takeReloadable(from new: Self) {
        profile = new.profile
        noticeTimeout = new.noticeTimeout
        dataWakes = new.dataWakes
        eventWakes = new.eventWakes
        defaultUser = new.defaultUser
        allowsRootApps = new.allowsRootApps
        allowsSignalsForOtherUsers = new.allowsSignalsForOtherUsers
    }
}
