import FoundationEssentials

/// Why a location request or an update stream failed, with what to do about it.
public struct LocationError: Error, Sendable, Hashable, DescribedError {
    /// Which kind of failure: match on it; the message says the rest.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Value: Sendable, Hashable {
            case gpsdUnreachable, connectionLost, locationUnknown, invalidOptions, replayFailed, notAuthorized
        }
        private let value: Value

        /// gpsd could not be reached: not running, wrong host or port.
        public static let gpsdUnreachable = Code(value: .gpsdUnreachable)
        /// The connection to gpsd broke or went silent; the manager reconnects.
        public static let connectionLost = Code(value: .connectionLost)
        /// No fix meeting the request arrived in time; ``LocationError/bestLocation`` has the best seen.
        public static let locationUnknown = Code(value: .locationUnknown)
        /// The request's options cannot be met as given.
        public static let invalidOptions = Code(value: .invalidOptions)
        /// An NMEA log could not be read.
        public static let replayFailed = Code(value: .replayFailed)
        /// Location is not allowed: not determined, denied, restricted, or services off; or
        /// when-in-use in the background.
        public static let notAuthorized = Code(value: .notAuthorized)

        /// The code's name.
        public var description: String {
            switch value {
            case .gpsdUnreachable: "gpsd unreachable"
            case .connectionLost: "connection lost"
            case .locationUnknown: "location unknown"
            case .invalidOptions: "invalid options"
            case .replayFailed: "replay failed"
            case .notAuthorized: "not authorized"
            }
        }
    }

    /// Which kind of failure.
    public var code: Code
    /// A sentence for a person: what happened and what to do.
    public var message: String
    /// For ``Code/locationUnknown``: the best fix seen before the timeout, if any.
    public var bestLocation: Location?

    /// An error of `code` saying `message`.
    public init(_ code: Code, _ message: String, bestLocation: Location? = nil) {
        self.code = code
        self.message = message
        self.bestLocation = bestLocation
    }

    /// The message.
    public var description: String { message }

    static func gpsdUnreachable(host: String, port: Int, reason: String) -> LocationError {
        LocationError(
            .gpsdUnreachable,
            "cannot reach gpsd at \(host):\(port) (\(reason)). Start it (sudo systemctl start gpsd, or "
                + "gpsd -N -S \(port) /dev/ttyUSB0), give GPSDSource(host:port:) where it listens (the tool: --gpsd HOST:PORT), "
                + "or replay a log with NMEAReplaySource (the tool: --replay FILE)"
        )
    }

    static func connectionLost(host: String, port: Int, reason: String) -> LocationError {
        LocationError(.connectionLost, "lost gpsd at \(host):\(port) (\(reason)); reconnecting")
    }

    /// `what` happened, with the best fix seen and the rule that turned it down.
    package static func locationUnknown(_ what: String, best: Location?, rejectedBecause rule: String?) -> LocationError {
        let bestText =
            best.map { fix in
                "best fix seen: \(fix.latitude), \(fix.longitude)"
                    + (fix.horizontalAccuracy.map { " ±\($0.fixed(1)) m" } ?? " (accuracy unknown)")
                    + (rule.map { ", turned down: \($0)" } ?? "")
            } ?? "no fix seen"
        return LocationError(.locationUnknown, "\(what) (\(bestText))", bestLocation: best)
    }

    package static func locationUnknown(after timeout: Duration, best: Location?) -> LocationError {
        locationUnknown("no fix met the request within \(timeout.secondsText)", best: best, rejectedBecause: nil)
    }

    static func invalidOptions(_ message: String) -> LocationError { LocationError(.invalidOptions, message) }
}

extension Duration {
    /// Seconds as a floating-point number.
    package var secondsValue: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }

    /// `1.5 s`, for messages.
    public var secondsText: String {
        let seconds = secondsValue
        return seconds == seconds.rounded() ? "\(Int(seconds)) s" : "\(seconds.significant(3)) s"
    }
}
