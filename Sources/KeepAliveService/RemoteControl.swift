public import KeepAliveCore
public import KeepAliveMonitoring

/// Commands from a server that the running service carries out: an OwnTracks destination's
/// remote commands (the journal commands make them). Started with the service, ended with it.
public protocol RemoteControl: Sendable {
    /// Takes commands and carries them out on `device` until the task is cancelled.
    func run(controlling device: RemoteDevice) async

    /// The sockets commands come by: under a host, the service names them before each
    /// suspension, and the first data on one wakes the app frozen.
    var commandSockets: [Int32] { get }
}

/// What a remote command may ask of the running service.
public struct RemoteDevice: Sendable {
    /// A fresh fix (one-shot, never a cached one), journaled, and so on its way to the
    /// destinations, before it is returned.
    public var reportLocation: @Sendable () async throws -> Location
    /// Changes the monitoring strategy's conditions: removes those of `removing`, then adds
    /// `adding` (new ones start unknown), for the service's own monitor or the host's.
    public var changeConditions: @Sendable (_ removing: Set<String>, _ adding: [String: MonitorCondition]) async throws -> Void
    /// The monitoring strategy's reporting mode (`nil`: none, or not the monitoring strategy).
    public var mode: @Sendable () -> ReportingMode?
    /// Reports in this mode from now on (until the service stops).
    public var setMode: @Sendable (ReportingMode) async throws -> Void
    /// Tells the service's output what a command did (or why it was ignored).
    public var note: @Sendable (String) -> Void

    /// A device from its parts (the service makes one; tests make their own).
    public init(
        reportLocation: @escaping @Sendable () async throws -> Location,
        changeConditions: @escaping @Sendable (_ removing: Set<String>, _ adding: [String: MonitorCondition]) async throws -> Void,
        mode: @escaping @Sendable () -> ReportingMode?,
        setMode: @escaping @Sendable (ReportingMode) async throws -> Void,
        note: @escaping @Sendable (String) -> Void
    ) {
        self.mode = mode
        self.setMode = setMode
        self.reportLocation = reportLocation
        self.changeConditions = changeConditions
        self.note = note
    }
}
