package import ArgumentParser
import FoundationEssentials
import KeepAliveCore

/// The journal and its destinations, shared by `run` and `upload`.
package struct DeliveryOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The fix journal, a SQLite file (default: $XDG_STATE_HOME/keepalive/journal.sqlite).", valueName: "path"
        )
    )
    package var journal: String?

    @Option(
        name: .customLong("deliver"),
        help: ArgumentHelp(
            "Deliver fixes to a server: NAME=URL, its options in the URL's query (?a=b&c=d). Repeat for several.",
            discussion: DeliveryOptions.destinationHelp,
            valueName: "name=url"
        )
    )
    package var destinations: [String] = []

    @Option(name: .customLong("batch-threshold"), help: "With --batch-latency, send as soon as this many fixes wait...")
    package var batchThreshold = 10

    @Option(
        name: .customLong("batch-latency"),
        help: ArgumentHelp(
            "...or as soon as the oldest has waited this long. 0s: each fix at once (what comes while a batch is in flight goes in the next).",
            valueName: "duration"
        )
    )
    package var batchLatency = "0s"

    @Option(name: .customLong("batch-max"), help: "At most this many fixes in one batch.")
    package var batchMax = 100

    @Option(name: .customLong("max-refusals"), help: "A fix refused this many times goes to the dead letters.")
    package var maxRefusals = 3

    @Option(
        name: .customLong("lease"),
        help: ArgumentHelp(
            "How long a delivering process's claim on a destination lasts unless renewed.", valueName: "duration",
            visibility: .hidden
        )
    )
    package var lease = "5m"

    @Option(
        help: ArgumentHelp(
            "grouped (fixes committed together every --commit-interval, and sent before their commit: "
                + "a power cut loses at most that interval's, never one said journaled; under 1 KB a fix to the disk) "
                + "or full (a commit per fix, sent once committed: a power cut loses none; about 10 KB a fix). "
                + "Either way a fix reaches a reachable server within a second or so.",
            valueName: "mode"
        )
    )
    package var durability = "grouped"

    @Option(
        name: .customLong("commit-interval"),
        help: ArgumentHelp(
            "With --durability grouped, how long a fix waits at most for its commit (what a power cut can lose).",
            valueName: "duration"
        )
    )
    package var commitInterval = "60s"

    @Option(
        name: .customLong("stop-timeout"),
        help: ArgumentHelp(
            "How long a stop waits to deliver what waits before it exits (a pause before the host freezes it: at most "
                + "the host's deadline); what is left is said, and sent at the next start. Keep it under systemd's TimeoutStopSec.",
            valueName: "duration"
        )
    )
    package var stopTimeout = "5s"

    @Option(
        name: .customLong("keep-fixes"),
        help: ArgumentHelp("The journal keeps at most this many fixes; the oldest go first.", valueName: "count")
    )
    package var keepFixes = 10_000_000

    @Option(
        name: .customLong("keep-for"),
        help: ArgumentHelp(
            "The journal drops delivered fixes this much older than its newest, by the receiver's time (never the system clock's).",
            valueName: "duration"
        )
    )
    package var keepFor = "90d"

    package init() {}

    /// Whether `run` should journal at all.
    package var isRequested: Bool { journal != nil || !destinations.isEmpty }

    package func validate() throws {
        _ = try stopBound()
        try JournalLink.validate(self)
    }

    /// `--stop-timeout`, checked.
    package func stopBound() throws -> Duration {
        guard let bound = Duration(parsing: stopTimeout), bound >= .zero, bound <= .seconds(600) else {
            throw ValidationError("--stop-timeout takes a duration from 0s to 10m, such as 5s")
        }
        return bound
    }

    /// `--deliver`'s URL forms and options (what `Destination` takes), listed in its help.
    static var destinationHelp: String {
        let forms: KeyValuePairs = [
            "mqtt[s]://[user@]host[:port]/owntracks/USER/DEVICE": "OwnTracks over MQTT (port 1883, mqtts 8883)",
            "owntracks+http[s]://[user@]host:port/pub?user=U&device=D": "an OwnTracks Recorder's HTTP endpoint",
            "traccar+http[s]://host:5055/?id=DEVICE": "Traccar's OsmAnd protocol",
        ]
        let options: KeyValuePairs = [
            "password-file=PATH": "the password, in a file of mode 0600 (never in the URL)",
            "ca=PATH": "the CA certificate for TLS (default: the system's)",
            "tid=XX": "OwnTracks' tracker id (default: the device's last two letters)",
            "client-id=ID": "MQTT's client id (default: keepalive-USER-DEVICE)",
            "key-file=PATH": "OwnTracks: encrypt every payload with the shared key in this 0600 file",
            "cmd=false": "OwnTracks over MQTT: take no remote commands (default: true)",
            "user=U, device=D": "an OwnTracks Recorder's user and device",
            "id=DEVICE": "Traccar's device id",
        ]
        func table(_ rows: KeyValuePairs<String, String>) -> String {
            let width = rows.map(\.key.count).max() ?? 0
            return rows.map { "  " + $0.key + String(repeating: " ", count: width - $0.key.count + 2) + $0.value }.joined(separator: "\n")
        }
        return "URLs:\n" + table(forms) + "\nOptions:\n" + table(options)
            + "\nFor example: home=mqtts://me@broker.example/owntracks/me/car?password-file=/etc/keepalive/mqtt.pass&tid=ca"
    }
}
