package import ArgumentParser
import Glibc
package import KeepAliveCore
package import KeepAliveMonitoring
package import KeepAliveService

/// What the commands need from the journal and delivery modules, which only `keepalive-journal`
/// links (they bring GRDB, SQLite and Foundation). `keepalive` has no link: a command that
/// needs the journal replaces the process with `keepalive-journal` and the same arguments
/// (``JournalLink/relaunch()``), so `watch`, `locate`, `auth`, `simulate`, `host` and `run`
/// without a journal never map them.
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

/// The journal commands of this process: set once, by `keepalive-journal`'s `main`.
package enum JournalLink {
    private static let installed = Locked<(any JournalCommands)?>(nil)

    /// The journal commands linked into this process, if any.
    package static var commands: (any JournalCommands)? { installed.withLock { $0 } }

    static func install(_ commands: (any JournalCommands)?) { installed.withLock { $0 = commands } }

    /// The journal commands, or this process replaced by `keepalive-journal` (never returns then).
    package static func required() -> any JournalCommands {
        if let commands { return commands }
        relaunch()
    }

    /// Checks `command`'s journal options where they can be checked (in `keepalive-journal`).
    package static func validate(_ command: any ParsableArguments) throws {
        try commands?.validate(command)
    }

    /// Runs `command` with the journal, here or in `keepalive-journal`.
    package static func run(_ command: any ParsableCommand) async throws {
        try await required().run(command)
    }

    /// Replaces this process with `keepalive-journal` (beside this binary, or in
    /// `../libexec/keepalive`), same arguments, same process id (so systemd's main process and a
    /// host's app stay the same); exits 1 saying how to install it when it is missing.
    static func relaunch() -> Never {
        let binary = executablePath()
        let folder = binary.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        let candidates = ["\(folder)/keepalive-journal", "\(folder)/../libexec/keepalive/keepalive-journal"]
        for path in candidates where access(path, X_OK) == 0 {
            var arguments = ProcessArguments.current
            arguments[0] = path
            let argv = arguments.map { strdup($0) } + [nil]
            execv(path, argv)
            Console.error("keepalive: cannot start \(path): \(String(cString: strerror(errno)))\n")
            exit(1)
        }
        Console.error(
            "keepalive: this command needs the journal, and keepalive-journal is not installed beside \(binary) "
                + "(looked in \(candidates.joined(separator: " and "))): install both with scripts/install\n"
        )
        exit(1)
    }

    private static func executablePath() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return ProcessArguments.current[0] }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
