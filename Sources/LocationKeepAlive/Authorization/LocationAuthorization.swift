/// What the user allowed for location, as CoreLocation's authorization status.
public enum LocationAuthorization: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    case notDetermined = "not-determined"
    case restricted
    case denied
    case whenInUse = "when-in-use"
    case always

    /// Whether location may be used at all.
    public var allowsLocation: Bool { self == .whenInUse || self == .always }

    public var description: String { rawValue }
}
