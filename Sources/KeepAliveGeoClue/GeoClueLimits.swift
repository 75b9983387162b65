/// What the GeoClue2 service admits of one peer and one user, as the host's control socket
/// does (``ControlLimits``' connection counts and request rate), so that no client can make
/// the service slow or large for the others.
public struct GeoClueLimits: Sendable {
    /// Client objects one bus connection may hold at once (`GetClient` returns its first).
    public var clientsPerPeer = 8
    /// Client objects the connections of one user may hold at once.
    public var clientsPerUser = 32
    /// Calls a connection may make a second, sustained, property writes among them; beyond it
    /// they are refused with `LimitsExceeded` (property reads are not counted).
    public var callsPerSecond = 50.0
    /// Calls a connection may make at once before the rate applies.
    public var callBurst = 100.0
    /// The largest `DistanceThreshold`: half the Earth's circumference, beyond which no move
    /// could ever pass it.
    public var largestDistanceThreshold: UInt32 = 20_037_509
    /// The largest `TimeThreshold`: a day. A client that wants a location less often holds the
    /// receiver open for it all that while; it should `Start` when it needs one.
    public var largestTimeThreshold: UInt32 = 86_400
    /// How long an agent has to answer `AuthorizeApp` before the `Start` is refused.
    public var agentTimeout: Duration = .seconds(25)

    /// The defaults.
    public init() {}
}
