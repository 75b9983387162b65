public import KeepAliveMonitoring

/// Something the host tells an app without being asked: each case carries exactly what it
/// says, so neither side reads a field its kind has not. On the wire, one JSON object with a
/// `notice` key (``Kind``) and that kind's fields (`event`, `deadline`, `task`, `name`,
/// `monitorEvent`, `received`).
public enum HostNotice: Sendable, Hashable {
    /// The compositor moved the app; it answers (`ack`) with the move's name once its own
    /// handler ran.
    case lifecycle(Move)
    /// The app is about to be frozen: stop watching, drain audio, then `ack` within `deadline` seconds.
    case willSuspend(deadline: Double)
    /// The app was thawed: anything that waited in its sockets is old.
    case didResume
    /// A background task's time is nearly up (the app's own number for it): end it.
    case taskExpiring(Int)
    /// Scheduled work's time is nearly up (its name): complete it.
    case workExpiring(String)
    /// Scheduled work is due (its name): do it, then `complete`.
    case runTask(String)
    /// The host asks the app to stop.
    case terminate
    /// One of the app's conditions changed state; `received` says when the fix that decided
    /// it reached the host, in seconds of the system's monotonic clock (`CLOCK_MONOTONIC`):
    /// an app subtracts it from its own reading of that clock to know how late it hears of
    /// the event. A frozen app was thawed for it, one not running launched.
    case locationEvent(MonitorEvent, received: Double?)

    /// The compositor's moves.
    public enum Move: String, Codable, Sendable, Hashable {
        /// Into the background: the app's handler runs, then it answers.
        case background
        /// Into the foreground.
        case foreground
    }

    /// What a notice says, as the wire's `notice` key names it.
    public enum Kind: String, Codable, Sendable, Hashable {
        /// ``HostNotice/lifecycle(_:)``.
        case lifecycle
        /// ``HostNotice/willSuspend(deadline:)``.
        case willSuspend = "will-suspend"
        /// ``HostNotice/didResume``.
        case didResume = "did-resume"
        /// ``HostNotice/taskExpiring(_:)`` and ``HostNotice/workExpiring(_:)``.
        case expiring
        /// ``HostNotice/runTask(_:)``.
        case runTask = "run-task"
        /// ``HostNotice/terminate``.
        case terminate
        /// ``HostNotice/locationEvent(_:received:)``.
        case locationEvent = "location-event"
    }

    /// Its kind.
    public var kind: Kind {
        switch self {
        case .lifecycle: .lifecycle
        case .willSuspend: .willSuspend
        case .didResume: .didResume
        case .taskExpiring, .workExpiring: .expiring
        case .runTask: .runTask
        case .terminate: .terminate
        case .locationEvent: .locationEvent
        }
    }

    /// What an app's `ack` of it names: the move for a lifecycle notice, else its kind.
    public var answer: String {
        if case .lifecycle(let move) = self { return move.rawValue }
        return kind.rawValue
    }
}

extension HostNotice: Codable {
    private enum Field: String, CodingKey {
        case notice, event, deadline, task, name, monitorEvent, received
    }

    /// Reads a notice line.
    ///
    /// - Throws: `DecodingError` naming the field its kind needs and the line lacks: a client
    ///   drops a notice it cannot read whole.
    public init(from decoder: any Decoder) throws {
        let fields = try decoder.container(keyedBy: Field.self)
        switch try fields.decode(Kind.self, forKey: .notice) {
        case .lifecycle: self = .lifecycle(try fields.decode(Move.self, forKey: .event))
        case .willSuspend: self = .willSuspend(deadline: try fields.decode(Double.self, forKey: .deadline))
        case .didResume: self = .didResume
        case .expiring:
            if let name = try fields.decodeIfPresent(String.self, forKey: .name) {
                self = .workExpiring(name)
            } else {
                self = .taskExpiring(try fields.decode(Int.self, forKey: .task))
            }
        case .runTask: self = .runTask(try fields.decode(String.self, forKey: .name))
        case .terminate: self = .terminate
        case .locationEvent:
            self = .locationEvent(
                try fields.decode(MonitorEvent.self, forKey: .monitorEvent),
                received: try fields.decodeIfPresent(Double.self, forKey: .received)
            )
        }
    }

    /// Writes the notice as its line's fields.
    public func encode(to encoder: any Encoder) throws {
        var fields = encoder.container(keyedBy: Field.self)
        try fields.encode(kind, forKey: .notice)
        switch self {
        case .lifecycle(let move): try fields.encode(move, forKey: .event)
        case .willSuspend(let deadline): try fields.encode(deadline, forKey: .deadline)
        case .taskExpiring(let number): try fields.encode(number, forKey: .task)
        case .workExpiring(let name), .runTask(let name): try fields.encode(name, forKey: .name)
        case .locationEvent(let event, let received):
            try fields.encode(event, forKey: .monitorEvent)
            try fields.encodeIfPresent(received, forKey: .received)
        case .didResume, .terminate: break
        }
    }
}
