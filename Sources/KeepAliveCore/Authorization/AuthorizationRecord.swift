public import FoundationEssentials

/// Full or approximate location, as CoreLocation's accuracy authorization.
public enum LocationAccuracyAuthorization: String, Sendable, Hashable, Codable, CaseIterable {
    /// Coordinates as the receiver gives them.
    case full
    /// Coordinates rounded to a 0.01 degree grid (about 1.1 km north-south), accuracy at least 1 km.
    case reduced

    /// The grid reduced coordinates are rounded to, in degrees.
    public static let reducedGrid = 0.01
}

/// What one application's user decided, as stored in its authorization file (version 1).
public struct AuthorizationRecord: Sendable, Hashable, Codable {
    /// The file format this software writes; a file with a higher version is refused, not rewritten.
    public static let currentVersion = 1

    /// The file format's version (a newer one is refused, never overwritten).
    public var version: Int
    /// The application identifier.
    public var application: String
    /// The authorization.
    public var status: LocationAuthorization
    /// Full, or reduced (coordinates rounded to about 1 km).
    public var accuracy: LocationAccuracyAuthorization
    /// Whether the one-time "change to always" prompt was shown.
    public var alwaysPromptShown: Bool
    /// "Allow once": when in use until the app leaves the foreground for a while or terminates.
    public var isTemporary: Bool
    /// When it last changed.
    public var updated: Date

    /// A record for `application`, not determined until the user answers.
    public init(
        application: String,
        status: LocationAuthorization = .notDetermined,
        accuracy: LocationAccuracyAuthorization = .full,
        alwaysPromptShown: Bool = false,
        isTemporary: Bool = false,
        updated: Date = Date()
    ) {
        self.version = Self.currentVersion
        self.application = application
        self.status = status
        self.accuracy = accuracy
        self.alwaysPromptShown = alwaysPromptShown
        self.isTemporary = isTemporary
        self.updated = updated
    }
}

extension Location {
    /// The location as an app with reduced accuracy sees it.
    public func reduced() -> Location {
        var copy = self
        let grid = LocationAccuracyAuthorization.reducedGrid
        copy.latitude = (latitude / grid).rounded() * grid
        copy.longitude = (longitude / grid).rounded() * grid
        copy.horizontalAccuracy = max(horizontalAccuracy ?? 0, 1_000)
        copy.altitudeHAE = nil
        copy.altitudeMSL = nil
        copy.verticalAccuracy = nil
        return copy
    }
}
