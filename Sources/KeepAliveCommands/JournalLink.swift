package import ArgumentParser
package import KeepAliveCore
package import KeepAliveMonitoring
package import KeepAliveService

/// What the commands need from the journal and delivery modules, which the commands module
/// does not import: `keepalive`'s `main` links them in (``JournalLink``), and a program built on
/// the commands alone runs every command but these.
package protocol JournalCommands: Sendable {
    /// The checks of a command's options that need the journal's types (destinations, formats).
    func validate(_ command: any ParsableArguments) throws
    /// Runs a command that reads or writes the journal.
    func run(_ command: any ParsableCommand) async throws
    /// The journal `keepalive run` records its fixes in, the delivery it runs beside them, and
    /// the remote commands of its OwnTracks destinations (which keep waypoints in `waypoints`).
    /// `isLive`: the fixes come from a receiver now (gpsd), so their times are compared with
    /// the system clock; a replay's are not.
    func service(
        _ options: DeliveryOptions, output: Output, recordsMetrics: Bool, waypoints: String?, isLive: Bool
    ) throws -> ServiceJournal
    /// The conditions of an OwnTracks waypoints file, by identifier (each waypoint's region id).
    func conditions(fromWaypoints file: String) throws -> [String: MonitorCondition]
}

/// A service's journal: where fixes go, what delivers them, and how many wait.
package struct ServiceJournal: Sendable {
    /// Keeps each fix (a `FixJournal`).
    package var recorder: any FixRecorder
    /// Keeps each location event, in order with the fixes (the same `FixJournal`).
    package var eventRecorder: (any MonitorEventRecorder)?
    /// Delivers the journal beside the service, if it has destinations.
    package var delivery: (any PausableWork)?
    /// Fixes waiting for delivery, over every destination.
    package var queueDepth: @Sendable () -> Int?
    /// The remote commands of its OwnTracks MQTT destinations, if it has any.
    package var remote: (any RemoteControl)?

    package init(
        recorder: any FixRecorder,
        eventRecorder: (any MonitorEventRecorder)? = nil,
        delivery: (any PausableWork)?,
        remote: (any RemoteControl)? = nil,
        queueDepth: @escaping @Sendable () -> Int?
    ) {
        self.remote = remote
        self.recorder = recorder
        self.eventRecorder = eventRecorder
        self.delivery = delivery
        self.queueDepth = queueDepth
    }
}

/// The journal commands of this process: set once, by `keepalive`'s `main`.
package enum JournalLink {
    private static let installed = Locked<(any JournalCommands)?>(nil)

    /// The journal commands linked into this process, if any.
    package static var commands: (any JournalCommands)? { installed.withLock { $0 } }

    static func install(_ commands: (any JournalCommands)?) { installed.withLock { $0 = commands } }

    /// The journal commands; throws when this program was built without them.
    package static func required() throws -> any JournalCommands {
        guard let commands else {
            throw ValidationError("this keepalive was built without the journal: build the keepalive product (scripts/install)")
        }
        return commands
    }

    /// Checks `command`'s journal options.
    package static func validate(_ command: any ParsableArguments) throws {
        try commands?.validate(command)
    }

    /// Runs `command` with the journal.
    package static func run(_ command: any ParsableCommand) async throws {
        try await required().run(command)
    }
}
