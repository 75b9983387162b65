public import KeepAliveCore

/// Lifecycle, authorization and receiver events at times, for the simulator.
///
/// One event per line, `TIME EVENT [ARGUMENT]`, times since the start (`0`, `90s`, `10m`, `2h`):
///
/// ```
/// # leave at once, come back after an hour, downgrade location later
/// 0 background
/// 1h foreground
/// 1h5m background
/// 3h auth when-in-use
/// 4h gps down
/// 4h10m gps up
/// 5h power off
/// 6h network down
/// ```
public struct SimulationScript: Sendable, Hashable {
    /// What happens at a time.
    public enum Action: Sendable, Hashable, CustomStringConvertible {
        /// The user leaves the app.
        case enterBackground
        /// The user comes back to the app.
        case enterForeground
        /// The user quits the app.
        case terminate
        /// The user changes the app's location authorization.
        case authorization(LocationAuthorization)
        /// The receiver (gpsd) stops or starts answering.
        case gps(available: Bool)
        /// External power is plugged in or out (scheduled processing may need it).
        case power(Bool)
        /// The network comes up or goes down (scheduled processing may need it).
        case network(Bool)

        /// The action as the script writes it.
        public var description: String {
            switch self {
            case .enterBackground: "background"
            case .enterForeground: "foreground"
            case .terminate: "terminate"
            case .authorization(let status): "auth \(status)"
            case .gps(let available): available ? "gps up" : "gps down"
            case .power(let on): on ? "power on" : "power off"
            case .network(let up): up ? "network up" : "network down"
            }
        }
    }

    /// One line of a script.
    public struct Event: Sendable, Hashable {
        /// Since the start of the simulation.
        public var time: Duration
        /// What happens then.
        public var action: Action
    }

    /// The events, in time order.
    public var events: [Event]

    /// A script from events in any order.
    public init(events: [Event]) { self.events = events.sorted { $0.time < $1.time } }

    /// The default: enter the background at once and stay there.
    public static let backgroundForever = SimulationScript(events: [Event(time: .zero, action: .enterBackground)])

    /// Parses a script; the error names the line.
    public init(parsing text: String) throws(SimulationScriptError) {
        var events: [Event] = []
        for (number, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0]
            let words = line.split(whereSeparator: \.isWhitespace).map(String.init)
            guard !words.isEmpty else { continue }
            func fail(_ why: String) -> SimulationScriptError { SimulationScriptError(line: number + 1, message: why) }
            guard let time = Duration(parsing: words[0]) else {
                throw fail("'\(words[0])' is not a time (use 90s, 10m, 2h)")
            }
            let action: Action
            switch (words.count > 1 ? words[1] : "", words.count > 2 ? words[2] : nil, words.count) {
            case ("background", nil, 2): action = .enterBackground
            case ("foreground", nil, 2): action = .enterForeground
            case ("terminate", nil, 2): action = .terminate
            case ("auth", let status?, 3):
                guard let parsed = LocationAuthorization(rawValue: status) else {
                    throw fail(
                        "unknown authorization '\(status)' (\(LocationAuthorization.allCases.map(\.rawValue).joined(separator: ", ")))"
                    )
                }
                action = .authorization(parsed)
            case ("gps", "down", 3): action = .gps(available: false)
            case ("gps", "up", 3): action = .gps(available: true)
            case ("power", "on", 3): action = .power(true)
            case ("power", "off", 3): action = .power(false)
            case ("network", "up", 3): action = .network(true)
            case ("network", "down", 3): action = .network(false)
            default:
                throw fail(
                    "expected background, foreground, terminate, auth STATUS, gps up|down, power on|off or network up|down, "
                        + "not '\(words.dropFirst().joined(separator: " "))'"
                )
            }
            events.append(Event(time: time, action: action))
        }
        self.init(events: events)
    }
}

/// A script line that could not be read.
public struct SimulationScriptError: Error, Sendable, Hashable, DescribedError {
    /// The line it is on, from 1.
    public var line: Int
    /// What is wrong with it.
    public var message: String

    /// An error on script line `line`.
    public init(line: Int, message: String) {
        self.line = line
        self.message = message
    }

    /// `script line N: message`.
    public var description: String { "script line \(line): \(message)" }
}
