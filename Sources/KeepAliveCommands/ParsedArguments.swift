import ArgumentParser
import KeepAliveCore
import KeepAliveHost
import KeepAliveService

/// A value the command line writes as text, such as a duration (`10s`, `200ms`, `3m`), a wake
/// budget (`2/20m`), a list of background modes (`audio,location`) or a name (`hybrid`, `ios13`).
protocol WrittenAsText: Sendable {
    init?(parsing text: String)
    /// The words it may be, for a name; empty for a value such as a duration.
    static var choices: [String] { get }
}

extension WrittenAsText {
    static var choices: [String] { [] }
}

extension Duration: WrittenAsText {}
extension BackgroundModes: WrittenAsText {}
extension WakeBudget: WrittenAsText {}
extension ReportingMode: WrittenAsText {
    static var choices: [String] { Kind.allCases.map(\.name) }
}

/// An option's value, read once from its text by ArgumentParser (a bad one is its error, naming
/// the option and the text), with the text kept for help's defaults and for messages.
struct Parsed<Value: WrittenAsText>: ExpressibleByArgument, ExpressibleByStringLiteral, Sendable {
    /// The value.
    let value: Value
    /// The text it was read from.
    let text: String

    init?(argument: String) {
        guard let value = Value(parsing: argument) else { return nil }
        self.value = value
        self.text = argument
    }

    /// A default written in the code, as the command line would write it.
    init(stringLiteral text: String) {
        guard let parsed = Parsed(argument: text) else { preconditionFailure("'\(text)' is not a valid default") }
        self = parsed
    }

    var defaultValueDescription: String { text }

    /// A name's choices, which a bad one's error lists.
    static var allValueStrings: [String] { Value.choices }
}

extension KeepAliveStrategyKind: WrittenAsText {
    init?(parsing text: String) { self.init(rawValue: text) }
    static var choices: [String] { allCases.map(\.rawValue) }
}

extension ReceiverPowerWay: WrittenAsText {
    init?(parsing text: String) { self.init(rawValue: text) }
    static var choices: [String] { allCases.map(\.rawValue) }
}

extension LocationAuthorization: WrittenAsText {
    init?(parsing text: String) { self.init(rawValue: text) }
    static var choices: [String] { allCases.map(\.rawValue) }
}

extension ExecutionProfile: WrittenAsText {
    init?(parsing text: String) {
        guard let profile = ExecutionProfile.named(text) else { return nil }
        self = profile
    }

    static var choices: [String] { all.map(\.name) }
}

/// `--freezer`: one kind, or `auto` for the first that works here.
enum FreezerArgument: String, ExpressibleByArgument, CaseIterable {
    case auto, cgroup2, cgroup1, signal

    /// The kind asked for (`nil`: the first that works here).
    var kind: FreezerKind? { FreezerKind(rawValue: rawValue) }
}

/// `--metrics`: `PORT`, `HOST:PORT` or `[IPv6]:PORT`; loopback when no host is given.
struct MetricsAddress: ExpressibleByArgument, Sendable {
    let host: String
    let port: Int

    init?(argument: String) {
        var host = "127.0.0.1"
        var port = Substring(argument)
        if let colon = argument.lastIndex(of: ":") {
            host = String(argument[..<colon])
            if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            port = argument[argument.index(after: colon)...]
        }
        guard !host.isEmpty, let number = Int(port), (0...65535).contains(number) else { return nil }
        self.host = host
        self.port = number
    }
}
