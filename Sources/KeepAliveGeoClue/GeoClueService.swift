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
    private let stopping = Locked(false)
    /// A pipe: a byte written to `wake.write` wakes the bus thread, which polls `wake.read`.
    private let wake: (read: Int32, write: Int32)
    private let thread = Locked<pthread_t?>(nil)

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
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw .setup("cannot make the bus thread's wake pipe: \(String(cString: strerror(errno)))") }
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        wake = (ends[0], ends[1])
        let bus = try SDBus()
        let server = try GeoClueServer(bus: bus, configuration: configuration, apps: apps, logger: logger, watch: watch, emit: emit)
        try bus.requestName(configuration.name)
        emit(.started(name: configuration.name))
        let (inbox, stopping, wake) = (inbox, stopping, wake)
        let work = BusThreadWork {
            do throws(GeoClueError) {
                try bus.run(
                    wake: wake.read,
                    stopping: { stopping.read { $0 } },
                    drain: { for fix in inbox.withLock({ fixes in defer { fixes = [] }; return fixes }) { server.fixArrived(fix) } }
                )
            } catch {
                emit(.failed(error.description))
            }
            server.close()
        }
        var thread = pthread_t()
        let context = Unmanaged.passRetained(work).toOpaque()
        guard pthread_create(&thread, nil, { BusThreadWork.run($0) }, context) == 0 else {
            Unmanaged<BusThreadWork>.fromOpaque(context).release()
            throw .setup("cannot start the bus thread")
        }
        self.thread.withLock { $0 = thread }
    }

    deinit {
        close(wake.read)
        close(wake.write)
    }

    /// Hands a fix from the host's watch to the clients.
    public func fixArrived(_ fix: Location) {
        inbox.withLock { $0.append(fix) }
        poke()
    }

    /// Stops serving: the name is released, clients are dropped with the connection.
    public func stop() {
        stopping.withLock { $0 = true }
        poke()
        if let thread = thread.withLock({ value in defer { value = nil }; return value }) {
            pthread_join(thread, nil)
        }
    }

    private func poke() {
        var one: UInt8 = 1
        _ = write(wake.write, &one, 1)
    }
}

/// The bus thread's body, carried through `pthread_create`'s context.
private final class BusThreadWork: @unchecked Sendable {
    // Unchecked: created before the thread and then used by it alone.
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }

    static func run(_ context: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
        let work = Unmanaged<BusThreadWork>.fromOpaque(context!).takeRetainedValue()
        work.body()
        return nil
    }
}
