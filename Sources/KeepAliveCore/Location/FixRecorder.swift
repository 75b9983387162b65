/// Somewhere fixes are kept as they come: the journal module's `FixJournal` keeps them
/// durably in SQLite. A ``KeepAliveService`` given one records every fix it delivers.
public protocol FixRecorder: Sendable {
    /// Keeps `fix`, or throws why it could not.
    func record(_ fix: Location) throws
}
