/// The hybrid recipe as a value type that takes events and returns actions, so its logic is
/// tested with no I/O: on entering the background, a background task; when it is about to
/// expire, end it and every `interval` request one location if authorized always, or play a
/// short pulse of silence otherwise. A poll that fails plays a pulse instead. The foreground
/// stops everything.
public struct HybridKeepAliveMachine: Sendable {
    /// The recipe's timings.
    public struct Options: Sendable, Hashable {
        /// Time between keep-alive ticks once the background task expired.
        public var interval: Duration = .seconds(10)
        /// Length of a pulse of silence.
        public var pulseLength: Duration = .milliseconds(200)
        /// A poll gives up after this; shorter than the interval.
        public var pollTimeout: Duration = .seconds(5)
        /// The client is called back this often while kept alive in the background.
        public var callbackInterval: Duration = .seconds(30)
        /// The client call-back interval is multiplied by this on battery below the low-power
        /// threshold. The keep-alive tick is not: longer than the host's grace, it gets the app suspended.
        public var lowPowerStretch: Double = 2

        /// The recipe's defaults: a tick every 10 s, polls given 5 s, 0.2 s pulses, a call-back every 30 s.
        public init() {}

        /// Throws a message when the options cannot work together.
        public func validate() throws(LocationError) {
            guard interval > .zero, pulseLength > .zero, callbackInterval > .zero else {
                throw .invalidOptions("interval, pulse length and callback interval must be positive")
            }
            guard pollTimeout > .zero, pollTimeout < interval else {
                throw .invalidOptions(
                    "the poll timeout (\(pollTimeout.secondsText)) must be shorter than the interval (\(interval.secondsText))"
                )
            }
            guard pulseLength < interval else { throw .invalidOptions("a pulse must be shorter than the interval") }
            guard lowPowerStretch >= 1, lowPowerStretch.isFinite else {
                throw .invalidOptions("the low-power stretch must be 1 or more")
            }
        }
    }

    /// What happened.
    public enum Event: Sendable, Hashable {
        /// The app entered the background.
        case enteredBackground
        /// The app is coming back to the foreground.
        case willEnterForeground
        /// The background task's time is nearly up.
        case taskExpiring
        /// The interval timer fired.
        case tick
        /// The client call-back timer fired.
        case callbackDue
        /// The location authorization changed.
        case authorizationChanged(LocationAuthorization)
        /// A location poll got a fix.
        case pollSucceeded
        /// A location poll failed, and why.
        case pollFailed(String)
        /// A silent pulse failed, and why.
        case audioFailed(String)
        /// The machine went on or off low battery.
        case lowPowerChanged(Bool)
    }

    /// What to do, in order.
    public enum Action: Sendable, Hashable {
        /// Begin a background task.
        case beginBackgroundTask
        /// End the background task.
        case endBackgroundTask
        /// Arm the interval timer.
        case scheduleTick(after: Duration)
        /// Disarm the interval timer.
        case cancelTick
        /// Arm the client call-back timer.
        case scheduleCallback(after: Duration)
        /// Disarm the client call-back timer.
        case cancelCallback
        /// Poll for one fix, giving up after `timeout`.
        case requestLocation(timeout: Duration)
        /// Play silent audio for this long.
        case playPulse(Duration)
        /// Call the client back.
        case callClient
        /// A decision, with a stable message and metadata, for the log.
        case log(Decision)
    }

    /// One logged decision.
    public struct Decision: Sendable, Hashable, CustomStringConvertible {
        /// What was decided, in words.
        public var message: String
        /// The figures behind it.
        public var metadata: [String: String]

        /// A decision saying `message`, with `metadata`.
        public init(message: String, metadata: [String: String]) {
            self.message = message
            self.metadata = metadata
        }

        /// The message and its metadata on one line.
        public var description: String {
            ([message] + metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }).joined(separator: " ")
        }
    }

    private enum Phase: String {
        case foreground
        case backgroundTask = "background-task"
        case looping
    }

    /// The timings it runs with.
    public let options: Options
    /// The location authorization it decides with.
    public private(set) var authorization: LocationAuthorization
    /// Whether the battery was low at the last tick (the call-back interval stretches).
    public private(set) var isLowPower = false
    private var phase = Phase.foreground
    /// A tick falls back once (poll to pulse, or pulse to poll): when the fallback fails too,
    /// the tick ends instead of alternating forever between two broken devices.
    private var tickFellBack = false

    /// A machine in the foreground, with the app's authorization now.
    public init(options: Options = Options(), authorization: LocationAuthorization) {
        self.options = options
        self.authorization = authorization
    }

    /// Whether the loop (polls or pulses) is running.
    public var isLooping: Bool { phase == .looping }

    /// Takes one event; returns what to do, in order.
    public mutating func handle(_ event: Event) -> [Action] {
        switch (phase, event) {
        case (.foreground, .enteredBackground):
            phase = .backgroundTask
            return [
                .beginBackgroundTask, .scheduleCallback(after: stretched(options.callbackInterval)),
                log("background task begun"),
            ]
        case (.backgroundTask, .taskExpiring):
            phase = .looping
            return [.endBackgroundTask, log("background task expiring: keep-alive loop started")] + tickActions()
        case (.looping, .tick):
            return tickActions()
        case (.looping, .pollFailed(let reason)):
            if tickFellBack {
                return [log("poll failed too: nothing keeps the app alive this tick", ["error": reason])]
            }
            tickFellBack = true
            return [log("poll failed: pulse instead", ["error": reason]), .playPulse(options.pulseLength)]
        case (.looping, .audioFailed(let reason)):
            if tickFellBack {
                return [log("audio failed too: nothing keeps the app alive this tick", ["error": reason])]
            }
            if authorization == .always {
                tickFellBack = true
                return [
                    log("audio failed: poll instead", ["error": reason]),
                    .requestLocation(timeout: options.pollTimeout),
                ]
            }
            return [log("audio failed: nothing keeps the app alive this tick", ["error": reason])]
        case (.looping, .pollSucceeded):
            return []
        case (.backgroundTask, .callbackDue), (.looping, .callbackDue):
            return [.callClient, .scheduleCallback(after: stretched(options.callbackInterval))]
        case (_, .authorizationChanged(let status)):
            guard status != authorization else { return [] }
            authorization = status
            return [log("authorization changed: takes effect at the next tick")]
        case (_, .lowPowerChanged(let lowPower)):
            guard lowPower != isLowPower else { return [] }
            isLowPower = lowPower
            return [
                log(
                    lowPower ? "low power: intervals stretched" : "power back: intervals restored",
                    ["stretch": lowPower ? "\(options.lowPowerStretch)" : "1"]
                )
            ]
        case (.backgroundTask, .willEnterForeground):
            phase = .foreground
            return [.endBackgroundTask, .cancelCallback, log("foreground: keep-alive stopped")]
        case (.looping, .willEnterForeground):
            phase = .foreground
            return [.cancelTick, .cancelCallback, log("foreground: keep-alive stopped")]
        default:
            return []
        }
    }

    private mutating func tickActions() -> [Action] {
        tickFellBack = false
        let next = Action.scheduleTick(after: options.interval)
        if authorization == .always {
            return [log("tick: location poll"), .requestLocation(timeout: options.pollTimeout), next]
        }
        return [log("tick: silent pulse"), .playPulse(options.pulseLength), next]
    }

    private func stretched(_ duration: Duration) -> Duration {
        isLowPower ? duration * options.lowPowerStretch : duration
    }

    private func log(_ message: String, _ metadata: [String: String] = [:]) -> Action {
        var all = metadata
        all["state"] = phase.rawValue
        all["authorization"] = authorization.rawValue
        return .log(Decision(message: message, metadata: all))
    }
}
