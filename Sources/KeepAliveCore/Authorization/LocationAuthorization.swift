/// What the user allowed for location, as CoreLocation's authorization status.
public enum LocationAuthorization: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// The user was never asked.
    case notDetermined = "not-determined"
    /// The system policy forbids location for this app; the app cannot change it.
    case restricted
    /// The user said no (or location services are off).
    case denied
    /// Fixes while the app is in the foreground only.
    case whenInUse = "when-in-use"
    /// Fixes in the foreground and the background: what a background location poll needs.
    case always

    /// Whether location may be used at all.
    public var allowsLocation: Bool { self == .whenInUse || self == .always }

    /// Whether an app so authorized gets location in `state`: with always anywhere, when in use
    /// in the foreground only. The one home of the rule: fixes (``LocationAccess``), the host's
    /// watch of an app's conditions and its `monitor` requests, and the simulator.
    public func allowsLocation(in state: AppState) -> Bool {
        self == .always || (self == .whenInUse && state.isInForeground)
    }

    /// The name the tool and the file use.
    public var description: String { rawValue }
}
