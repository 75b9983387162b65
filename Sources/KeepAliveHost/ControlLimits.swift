/// What the host's sockets admit, so that no client, app or local user can hold up the others.
///
/// The sockets are served on one event loop with non-blocking reads and writes: an idle, slow
/// or frozen client costs a descriptor and a few bytes, never a thread. Connections from inside
/// an app's group count against that app (a frozen app's too); others against their user.
public struct ControlLimits: Sendable, Hashable {
    /// Connections open at once from the processes of one app.
    public var connectionsPerApp = 8
    /// Connections open at once from one user's processes outside every app.
    public var connectionsPerUser = 32
    /// A connection on the control socket that asks nothing this long after it connected, or
    /// one on the apps' socket that has not said hello and asks nothing for this long, is
    /// closed. (A compositor's connection that asked once stays open; so does an app's.)
    public var idleTimeout: Duration = .seconds(30)
    /// A request line begun must end within this long.
    public var lineTimeout: Duration = .seconds(10)
    /// Requests a connection may make a second, sustained; beyond it the host reads its
    /// requests no faster (the client waits, nobody else does).
    public var requestsPerSecond = 50
    /// Requests a connection may make at once before the rate applies.
    public var requestBurst = 100
    /// Requests read from one connection and not yet answered: beyond it the host stops reading
    /// that connection until they are.
    public var queuedRequests = 16
    /// Bytes waiting for a client that does not read its replies: beyond it, it is disconnected.
    public var unsentBytes = 1 << 20

    /// The defaults.
    public init() {}
}
