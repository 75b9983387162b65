import KeepAliveBus
import CSDBus
import FoundationEssentials
import Glibc
import KeepAliveCore
import Logging

/// The service's objects and their state, on the bus thread: the manager, the clients and
/// their locations, the agents, and what each peer holds. sd-bus calls in through the
/// handlers (``handlers``); the service's thread hands it fixes.
final class GeoClueServer {
    static let managerPath = "/org/freedesktop/GeoClue2/Manager"
    static let managerInterface = "org.freedesktop.GeoClue2.Manager"
    static let clientInterface = "org.freedesktop.GeoClue2.Client"
    static let locationInterface = "org.freedesktop.GeoClue2.Location"
    static let agentInterface = "org.freedesktop.GeoClue2.Agent"
    static let agentPath = "/org/freedesktop/GeoClue2/Agent"

    let bus: SDBus
    let configuration: GeoClueService.Configuration
    let apps: any GeoClueHostedApps
    let authorizer: GeoClueAuthorizer
    let logger: Logger
    let watch: @Sendable (Bool) -> Void
    let emit: @Sendable (GeoClueService.Event) -> Void
    /// The handlers every vtable, call and tracker of this server calls (freed in ``close()``).
    let handlers: UnsafeMutablePointer<csdbus_handlers>

    var clients: [String: GeoClueClient] = [:]
    var nextClient = 1
    var peers: [String: GeoCluePeer] = [:]
    /// Agents by user: the unique name that registered last, and the desktop id it gave.
    var agents: [UInt32: (name: String, id: String)] = [:]
    /// `Start`s waiting for an agent's answer, by the cookie of the `AuthorizeApp` call.
    var pendingStarts: [UInt64: (client: String, call: BusMessage)] = [:]
    /// The last fix, given to a client when it starts.
    var lastFix: Location?
    /// The device's cell at each coarse level.
    var coarse: [GeoClueAccuracy: CoarsePosition] = [:]
    var isWatching = false

    init(
        bus: SDBus, configuration: GeoClueService.Configuration, apps: any GeoClueHostedApps, logger: Logger,
        watch: @escaping @Sendable (Bool) -> Void, emit: @escaping @Sendable (GeoClueService.Event) -> Void
    ) throws(BusFailure) {
        self.bus = bus
        self.configuration = configuration
        self.apps = apps
        self.logger = logger
        self.watch = watch
        self.emit = emit
        authorizer = GeoClueAuthorizer(file: configuration.authorizationFile, apps: apps, sessions: LogindSessions(api: bus.api), logger: logger)
        handlers = .allocate(capacity: 1)
        handlers.initialize(to: csdbus_handlers())
        handlers.pointee.context = Unmanaged.passUnretained(self).toOpaque()
        handlers.pointee.method = { context, call, error in
            GeoClueServer.from(context).handleMethod(call!, error)
        }
        handlers.pointee.get = { context, path, interface, property, reply, error in
            GeoClueServer.from(context).get(String(cString: path!), String(cString: interface!), String(cString: property!), reply!, error)
        }
        handlers.pointee.set = { context, path, interface, property, value, error in
            GeoClueServer.from(context).set(String(cString: path!), String(cString: property!), value!, error)
        }
        handlers.pointee.exists = { context, path, interface in
            GeoClueServer.from(context).exists(String(cString: path!), String(cString: interface!)) ? 1 : 0
        }
        handlers.pointee.reply = { context, reply in
            let server = GeoClueServer.from(context)
            server.agentAnswered(BusMessage(server.bus.api, reply!))
            return 1
        }
        handlers.pointee.gone = { context, track in
            GeoClueServer.from(context).peerLeft(track!)
            return 0
        }
        try bus.add(csdbus_geoclue_manager(), interface: Self.managerInterface, at: Self.managerPath, fallback: false, handlers: handlers)
        try bus.add(csdbus_geoclue_client(), interface: Self.clientInterface, at: GeoClueClient.prefix, fallback: true, handlers: handlers)
        try bus.add(csdbus_geoclue_location(), interface: Self.locationInterface, at: GeoClueClient.prefix, fallback: true, handlers: handlers)
    }

    private static func from(_ context: UnsafeMutableRawPointer?) -> GeoClueServer {
        Unmanaged<GeoClueServer>.fromOpaque(context!).takeUnretainedValue()
    }

    /// Drops every peer's trackers and the handlers; called on the bus thread as it ends.
    func close() {
        for peer in peers.values { if let track = peer.track { bus.untrack(track) } }
        peers = [:]
        for pending in pendingStarts.values { pending.call.release() }
        pendingStarts = [:]
        if isWatching { watch(false) }
    }

    // MARK: Dispatch

    private func handleMethod(_ pointer: OpaquePointer, _ out: UnsafeMutablePointer<sd_bus_error>?) -> Int32 {
        let call = BusMessage(bus.api, pointer)
        guard let sender = call.sender, let member = call.member, let path = call.path else {
            return fail(out, .failed("a call with no sender, member or path"), api: bus.api)
        }
        do throws(BusError) {
            let peer = try admit(sender, call)
            if path == Self.managerPath {
                try manage(member, call, peer)
            } else {
                try clientCall(member, path: path, call, peer)
            }
            return 1
        } catch {
            emit(.refused("\(sender) \(member) on \(path): \(error.message)"))
            return fail(out, error, api: bus.api)
        }
    }

    private func get(_ path: String, _ interface: String, _ property: String, _ reply: OpaquePointer, _ out: UnsafeMutablePointer<sd_bus_error>?) -> Int32 {
        let reply = BusMessage(bus.api, reply)
        if path == Self.managerPath {
            switch property {
            case "InUse": reply.append(clients.values.contains { $0.isActive })
            default: reply.append(GeoClueAccuracy.exact.rawValue)
            }
            return 1
        }
        let sender = bus.currentMessage?.sender ?? ""
        do throws(BusError) {
            if interface == Self.locationInterface {
                let (location, level) = try ownedLocation(path, sender)
                appendProperty(property, of: location, level: level, to: reply)
            } else {
                let client = try owned(path, sender)
                switch property {
                case "Location": reply.append(client.current?.path ?? "/", type: "o")
                case "DistanceThreshold": reply.append(client.distanceThreshold)
                case "TimeThreshold": reply.append(client.timeThreshold)
                case "DesktopId": reply.append(client.desktopID)
                case "RequestedAccuracyLevel": reply.append(client.requested.rawValue)
                default: reply.append(client.isActive)
                }
            }
            return 1
        } catch {
            return fail(out, error, api: bus.api)
        }
    }

    private func set(_ path: String, _ property: String, _ value: OpaquePointer, _ out: UnsafeMutablePointer<sd_bus_error>?) -> Int32 {
        let value = BusMessage(bus.api, value)
        guard let call = bus.currentMessage, let sender = call.sender else {
            return fail(out, .failed("a property write with no sender"), api: bus.api)
        }
        do throws(BusError) {
            _ = try admit(sender, call)  // a write is a call: it signals every listener
            let client = try owned(path, sender)
            try setProperty(property, of: client, from: value)
            bus.propertiesChanged(at: client.path, interface: Self.clientInterface, [property])
            return 0
        } catch {
            emit(.refused("\(sender) setting \(property) on \(path): \(error.message)"))
            return fail(out, error, api: bus.api)
        }
    }

    private func exists(_ path: String, _ interface: String) -> Bool {
        if interface == Self.clientInterface { return clients[path] != nil }
        guard let client = Self.client(ofLocation: path) else { return false }
        return clients[client]?.location(at: path) != nil
    }

    /// The client path of a location's (`CLIENT/Location/N`), if `path` is one.
    static func client(ofLocation path: String) -> String? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 8, parts[6] == "Location" else { return nil }
        return parts[..<6].joined(separator: "/")
    }

    // MARK: Ownership

    /// The client at `path`, if `sender` owns it: a client's objects are its connection's alone.
    func owned(_ path: String, _ sender: String) throws(BusError) -> GeoClueClient {
        guard let client = clients[path] else { throw .unknownObject("no client at \(path)") }
        guard client.owner == sender else {
            throw .accessDenied("\(path) belongs to another connection (\(client.owner)): only the connection that made a client may use it")
        }
        return client
    }

    private func ownedLocation(_ path: String, _ sender: String) throws(BusError) -> (Location, GeoClueAccuracy) {
        guard let clientPath = Self.client(ofLocation: path) else { throw .unknownObject("no location at \(path)") }
        let client = try owned(clientPath, sender)
        guard let found = client.location(at: path) else { throw .unknownObject("no location at \(path) (a client keeps its last two)") }
        return found
    }

    private func appendProperty(_ property: String, of location: Location, level: GeoClueAccuracy, to reply: BusMessage) {
        switch property {
        case "Latitude": reply.append(location.latitude)
        case "Longitude": reply.append(location.longitude)
        case "Accuracy": reply.append(location.horizontalAccuracy ?? -1)  // unknown, as GeoClue says it
        case "Altitude": reply.append(location.altitudeMSL ?? location.altitudeHAE ?? -Double.greatestFiniteMagnitude)
        case "Speed": reply.append(location.speed ?? -1)
        case "Heading": reply.append(location.course ?? -1)
        case "Description": reply.append(level == .exact ? "gpsd" : "approximate (\(level), the centre of a \(level.grid ?? 0)° cell)")
        default:
            let seconds = location.timestamp?.timeIntervalSince1970 ?? 0  // every location given has one
            let whole = seconds.rounded(.down)
            reply.appendPair(UInt64(max(0, whole)), UInt64(max(0, ((seconds - whole) * 1e6).rounded(.down))))
        }
    }
}
