/// Keeps location events durably as they come: a `FixJournal`, in order with the fixes.
public protocol MonitorEventRecorder: Sendable {
    /// Stores `event`; throws when it could not be stored.
    func record(_ event: MonitorEvent) throws
}
