/// What the GeoClue2 service asks the host about its apps, from the bus thread (so the
/// answers must come without waiting for the host's executor).
public protocol GeoClueHostedApps: Sendable {
    /// The host's app whose group holds process `pid`, if any.
    func app(of pid: Int32) -> String?
    /// Whether the host's app `app` runs in the foreground (active or inactive) now.
    func isInForeground(_ app: String) -> Bool
}

/// No host: every client is an app outside it.
public struct NoHostedApps: GeoClueHostedApps {
    /// No host.
    public init() {}
    /// Never one of the host's apps.
    public func app(of pid: Int32) -> String? { nil }
    /// Never in a host's foreground.
    public func isInForeground(_ app: String) -> Bool { false }
}
