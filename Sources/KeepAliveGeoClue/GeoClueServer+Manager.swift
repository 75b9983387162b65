import KeepAliveBus
import CSDBus
import Glibc
import KeepAliveCore

/// The manager's calls, and the peers behind them.
extension GeoClueServer {
    /// Seconds of `CLOCK_MONOTONIC`.
    static func now() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// The peer `sender`, known from its first call on (its user and process asked of the bus
    /// once, and its leaving tracked), after its call budget allows this call.
    func admit(_ sender: String, _ call: BusMessage) throws(BusError) -> GeoCluePeer {
        let limits = configuration.limits
        let now = Self.now()
        if let peer = peers[sender] {
            guard peer.takeCall(rate: limits.callsPerSecond, burst: limits.callBurst, now: now) else {
                throw .limitsExceeded("more than \(Int(limits.callsPerSecond)) calls a second from \(sender): slow down")
            }
            return peer
        }
        guard let credentials = call.senderCredentials() else { throw .failed("the bus did not say who \(sender) is") }
        let peer = GeoCluePeer(
            name: sender, uid: credentials.uid, pid: credentials.pid, hostedApp: apps.app(of: credentials.pid),
            burst: limits.callBurst, now: now
        )
        guard let track = bus.track(sender, handlers: handlers) else { throw .failed("cannot follow \(sender) on the bus (gone already?)") }
        peer.track = track
        _ = peer.takeCall(rate: limits.callsPerSecond, burst: limits.callBurst, now: now)
        peers[sender] = peer
        return peer
    }

    func manage(_ member: String, _ call: BusMessage, _ peer: GeoCluePeer) throws(BusError) {
        switch member {
        case "GetClient":
            let path: String
            if let first = peer.clients.first { path = first } else { path = try createClient(for: peer) }
            call.reply { $0.append(path, type: "o") }
        case "CreateClient":
            let path = try createClient(for: peer)
            call.reply { $0.append(path, type: "o") }
        case "DeleteClient":
            guard let path = call.readString("o") else { throw .invalidArguments("DeleteClient takes the client's path") }
            let client = try owned(path, peer.name)
            remove(client, reason: "deleted by its connection")
            call.reply()
        default:  // AddAgent
            guard let id = call.readString() else { throw .invalidArguments("AddAgent takes the agent's desktop id") }
            // An agent can only make its user's clients' access stricter (the store decides
            // first), so any process of the user may be its agent: the last one registered.
            agents[peer.uid] = (peer.name, id)
            emit(.agent(user: peer.uid, id: id, connection: peer.name, gone: false))
            call.reply()
        }
    }

    private func createClient(for peer: GeoCluePeer) throws(BusError) -> String {
        let limits = configuration.limits
        guard peer.clients.count < limits.clientsPerPeer else {
            throw .limitsExceeded("\(peer.name) holds \(peer.clients.count) clients, the most one connection may: delete one (DeleteClient) first")
        }
        let ofUser = clients.values.count { $0.uid == peer.uid }
        guard ofUser < limits.clientsPerUser else {
            throw .limitsExceeded("user \(peer.uid) holds \(ofUser) clients, the most one user may: delete some first")
        }
        let client = GeoClueClient(number: nextClient, owner: peer.name, uid: peer.uid, pid: peer.pid, hostedApp: peer.hostedApp)
        nextClient += 1
        clients[client.path] = client
        peer.clients.append(client.path)
        return client.path
    }

    /// Forgets `client` and its locations.
    func remove(_ client: GeoClueClient, reason: String) {
        if client.isActive || client.isStarting { deactivate(client, reason: reason, tell: false) }
        clients[client.path] = nil
        peers[client.owner]?.clients.removeAll { $0 == client.path }
    }

    /// A connection left the bus: its clients go, and its agent registration.
    func peerLeft(_ track: OpaquePointer) {
        guard let peer = peers.values.first(where: { $0.track == track }) else { return }
        for path in peer.clients { if let client = clients[path] { remove(client, reason: "its connection left the bus") } }
        bus.untrack(track)
        peers[peer.name] = nil
        for (uid, agent) in agents where agent.name == peer.name {
            agents[uid] = nil
            emit(.agent(user: uid, id: agent.id, connection: agent.name, gone: true))
        }
    }
}
