import KeepAliveBus
import CSDBus
import KeepAliveCore

/// A client's calls and properties: `Start` asks the store and the user's agent, and the
/// stricter answer wins.
extension GeoClueServer {
    func clientCall(_ member: String, path: String, _ call: BusMessage, _ peer: GeoCluePeer) throws(BusError) {
        let client = try owned(path, peer.name)
        switch member {
        case "Start":
            try start(client, call)
        default:  // Stop
            if client.isActive || client.isStarting { deactivate(client, reason: "stopped by its connection", tell: true) }
            call.reply()
        }
    }

    func setProperty(_ property: String, of client: GeoClueClient, from value: BusMessage) throws(BusError) {
        let limits = configuration.limits
        switch property {
        case "DesktopId":
            guard let id = value.readString() else { throw .invalidArguments("DesktopId is a string") }
            guard !client.isActive, !client.isStarting else { throw .accessDenied("DesktopId cannot change while the client is started: Stop it first") }
            guard id.utf8.count <= 255, !id.contains("/"), !id.contains("\0") else {
                throw .invalidArguments("DesktopId is a desktop file's name without .desktop: at most 255 bytes, no /")
            }
            client.desktopID = id
        case "RequestedAccuracyLevel":
            guard let level = value.readUInt32() else { throw .invalidArguments("RequestedAccuracyLevel is a number") }
            client.requested = GeoClueAccuracy(requested: level)
        case "DistanceThreshold":
            guard let metres = value.readUInt32() else { throw .invalidArguments("DistanceThreshold is a number of metres") }
            guard metres <= limits.largestDistanceThreshold else {
                throw .invalidArguments(
                    "DistanceThreshold \(metres) m is more than half the Earth's circumference (\(limits.largestDistanceThreshold) m): no move could pass it"
                )
            }
            client.distanceThreshold = metres
        default:  // TimeThreshold
            guard let seconds = value.readUInt32() else { throw .invalidArguments("TimeThreshold is a number of seconds") }
            guard seconds <= limits.largestTimeThreshold else {
                throw .invalidArguments(
                    "TimeThreshold \(seconds) s is more than \(limits.largestTimeThreshold) s (a day): Start the client when a location is wanted instead"
                )
            }
            client.timeThreshold = seconds
        }
    }

    private func start(_ client: GeoClueClient, _ call: BusMessage) throws(BusError) {
        guard !client.isActive else { return call.reply() }
        guard !client.isStarting else { throw .accessDenied("\(client.path) is already starting (its user's agent is being asked)") }
        if let hosted = client.hostedApp, !client.desktopID.isEmpty, client.desktopID != hosted {
            throw .accessDenied("this process runs as the host's app \(hosted): its DesktopId is \(hosted), not \(client.desktopID)")
        }
        guard !client.app.isEmpty else {
            throw .accessDenied("set DesktopId first: the app's name in the host's authorization store (keepalive auth set --app NAME)")
        }
        switch authorizer.access(for: client, now: Self.now(), fresh: true) {
        case .denied(let reason), .paused(let reason):
            throw .accessDenied(reason)
        case .deliver:
            break
        }
        guard let agent = agents[client.uid] else { return activate(client, agentAllows: .exact, call) }
        // The user's agent is asked as GeoClue asks it; its answer is the second opinion.
        let requested = max(client.requested, .country)
        let timeout = UInt64(configuration.limits.agentTimeout.components.seconds) * 1_000_000
        guard
            let cookie = bus.callAsync(
                agent.name, path: Self.agentPath, interface: Self.agentInterface, member: "AuthorizeApp", timeout: timeout, handlers: handlers,
                { message in
                    message.append(client.desktopID.isEmpty ? client.app : client.desktopID)
                    message.append(requested.rawValue)
                }
            )
        else { throw .failed("cannot ask the agent \(agent.id) (\(agent.name))") }
        client.isStarting = true
        pendingStarts[cookie] = (client.path, call.retain())
    }

    /// The agent's answer to a `Start`'s `AuthorizeApp`: `(authorized, allowed level)`.
    func agentAnswered(_ reply: BusMessage) {
        guard let cookie = reply.replyCookie, let pending = pendingStarts.removeValue(forKey: cookie) else { return }
        defer { pending.call.release() }
        guard let client = clients[pending.client], client.isStarting else {
            return refuse(pending.call, .accessDenied("\(pending.client) was stopped or deleted while its user's agent was asked"))
        }
        client.isStarting = false
        if let error = reply.error {
            return refuse(pending.call, .accessDenied("the user's agent did not answer AuthorizeApp (\(error.name): \(error.message))"))
        }
        guard let authorized = reply.readBool(), let allowed = reply.readUInt32() else {
            return refuse(pending.call, .accessDenied("the user's agent answered AuthorizeApp with something other than (bu)"))
        }
        guard authorized else { return refuse(pending.call, .accessDenied("the user's agent refused location to \(client.app)")) }
        activate(client, agentAllows: GeoClueAccuracy(requested: allowed), pending.call)
    }

    private func refuse(_ call: BusMessage, _ error: BusError) {
        emit(.refused("Start: \(error.message)"))
        call.reply(error)
    }

    private func activate(_ client: GeoClueClient, agentAllows: GeoClueAccuracy, _ call: BusMessage) {
        guard case .deliver(let store) = authorizer.access(for: client, now: Self.now()) else {
            return refuse(call, .accessDenied("the authorization of \(client.app) changed while its agent was asked"))
        }
        client.granted = min(max(client.requested, .country), agentAllows, store)
        client.isActive = true
        bus.propertiesChanged(at: client.path, interface: Self.clientInterface, ["Active"])
        call.reply()
        emit(.clientStarted(client: client.path, app: client.app, accuracy: client.granted))
        updateWatch()
        if let lastFix { offer(lastFix, to: client) }  // what GeoClue's locator has cached
    }

    /// Ends a client's updates; `tell`: its `Active` change is signalled (not when it is removed).
    func deactivate(_ client: GeoClueClient, reason: String, tell: Bool) {
        client.isActive = false
        client.isStarting = false
        if tell { bus.propertiesChanged(at: client.path, interface: Self.clientInterface, ["Active"]) }
        emit(.clientStopped(client: client.path, reason: reason))
        updateWatch()
    }

    /// Asks the host for the receiver while a client is started.
    func updateWatch() {
        let wanted = clients.values.contains { $0.isActive }
        guard wanted != isWatching else { return }
        isWatching = wanted
        watch(wanted)
        bus.propertiesChanged(at: Self.managerPath, interface: Self.managerInterface, ["InUse"])
    }
}
