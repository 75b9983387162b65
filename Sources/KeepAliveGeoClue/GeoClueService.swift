import KeepAliveBus
import FoundationEssentials
import Glibc
public import KeepAliveCore
public import Logging

/// GeoClue2 on the system bus (`org.freedesktop.GeoClue2`), served from the host's one watch
/// of gpsd and decided by its authorization store: every Linux app that asks GeoClue for the
/// location (GNOME Maps, the desktop portal, `where-am-i`) gets gpsd's fixes through the host.
///
/// The bus is served by sd-bus on a thread of its own; fixes come in with ``fixArrived(_:)``
/// from any thread. See "Existing Linux apps (GeoClue2)" in the porting article.
public final class GeoClueService: Sendable {
    /// What the service is told and decides with.
    public struct Configuration: Sendable {
        /// Where an app's authorization is read (the host's own store).
        public var authorizationFile: @Sendable (String) -> AuthorizationFile
        /// What one peer and one user may hold.
        public var limits = GeoClueLimits()
        /// The bus name served.
        public var name = "org.freedesktop.GeoClue2"

        /// The defaults, reading each app's authorization where `authorizationFile` says.
        public init(authorizationFile: @escaping @Sendable (String) -> AuthorizationFile) {
            self.authorizationFile = authorizationFile
        }
    }

    /// Something the service did, for the host's output.
    public enum Event: Sendable {
        /// Serving `name` on the system bus.
        case started(name: String)
        /// A client began receiving locations for `app` at `accuracy`.
        case clientStarted(client: String, app: String, accuracy: GeoClueAccuracy)
        /// A client stopped receiving locations, and why.
        case clientStopped(client: String, reason: String)
        /// A user's agent registered (`AddAgent`), or `gone`: it left the bus.
        case agent(user: UInt32, id: String, connection: String, gone: Bool)
        /// A call was refused, and why.
        case refused(String)
        /// The bus failed; the service is stopped.
        case failed(String)
    }

    private let inbox = Locked<[Location]>([])
    private let thread: BusThread

    /// Connects to the system bus, takes the name and serves until ``stop()``.
    ///
    /// - Parameters:
    ///   - apps: the host's apps, to tell which app a client's process belongs to.
    ///   - watch: called with `true` when the first client starts (the receiver is needed) and
    ///     `false` when the last stops.
    /// - Throws: ``GeoClueError`` when libsystemd, the bus or the name is missing.
    public init(
        configuration: Configuration,
        apps: any GeoClueHostedApps = NoHostedApps(),
        logger: Logger = Logger(label: "LocationKeepAlive.geoclue"),
        watch: @escaping @Sendable (Bool) -> Void,
        emit: @escaping @Sendable (Event) -> Void = { _ in }
    ) throws(GeoClueError) {
        do throws(BusFailure) {
            thread = try BusThread()
            let bus = try SDBus()
            let server = try GeoClueServer(bus: bus, configuration: configuration, apps: apps, logger: logger, watch: watch, emit: emit)
            try bus.requestName(configuration.name)
            emit(.started(name: configuration.name))
            let inbox = inbox
            try thread.start(
                bus,
                drain: { for fix in inbox.withLock({ fixes in defer { fixes = [] }; return fixes }) { server.fixArrived(fix) } },
                ended: { failure in
                    if let failure { emit(.failed(GeoClueError(failure).description)) }
                    server.close()
                }
            )
        } catch {
            throw GeoClueError(error)
        }
    }

    /// Hands a fix from the host's watch to the clients.
    public func fixArrived(_ fix: Location) {
        inbox.withLock { $0.append(fix) }
        poke()
    }

    /// Stops serving: the name is released, clients are dropped with the connection.
    public func stop() { thread.stop() }

    private func poke() { thread.poke() }
}
