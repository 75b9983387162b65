public import FoundationEssentials

/// Somewhere fixes are kept as they come: the journal module's `FixJournal` keeps them
/// durably in SQLite. A ``KeepAliveService`` given one records every fix it delivers.
public protocol FixRecorder: Sendable {
    /// Keeps `fix`, or throws why it could not.
    func record(_ fix: Location) throws
    /// Keeps `fix`, then calls `tell` once the fix may be told: at once by default; after the
    /// commit that stores it for a recorder that promises a fix on the disk before it is told
    /// (a journal writer in `full`), with the caller not waiting for the disk. Throws, without
    /// calling `tell`, why it could not keep it.
    func record(_ fix: Location, then tell: @escaping @Sendable () -> Void) throws
    /// Makes what was recorded durable now: before the device sleeps (a battery can run out
    /// while it does). By default nothing: each record already is.
    func commitNow() throws
    /// Marks the time from `start` to `end` as a gap after what was recorded so far: the
    /// device slept (`reason`). By default, nothing is kept.
    func recordGap(from start: Date, to end: Date, reason: String) throws
}

extension FixRecorder {
    /// Records `fix`, then tells it.
    public func record(_ fix: Location, then tell: @escaping @Sendable () -> Void) throws {
        try record(fix)
        tell()
    }
    /// Nothing to commit: each record is durable.
    public func commitNow() throws {}
    /// Nothing kept.
    public func recordGap(from start: Date, to end: Date, reason: String) throws {}
}
