/// One element of a location update stream.
public enum LocationUpdate: Sendable, Hashable {
    /// A new fix that passed the stream's filter.
    case location(Location)
    /// News that is not a location: connection, fix lost, replay finished.
    case status(LocationStatus)
}
