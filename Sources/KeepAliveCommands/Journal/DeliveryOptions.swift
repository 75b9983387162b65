package import ArgumentParser
import FoundationEssentials

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
            "Deliver fixes to a server: NAME=URL, with URL mqtt[s]://[user@]host[:port]/owntracks/USER/DEVICE, "
                + "owntracks+http[s]://host:port/pub?user=U&device=D or traccar+http[s]://host:5055/?id=DEVICE "
                + "(options: password-file=PATH, ca=PATH, tid=XX). Repeat for several.",
            valueName: "name=url"
        )
    )
    package var destinations: [String] = []

    @Option(name: .customLong("batch-threshold"), help: "Send as soon as this many fixes wait.")
    package var batchThreshold = 10

    @Option(
        name: .customLong("batch-latency"),
        help: ArgumentHelp("...or as soon as the oldest has waited this long.", valueName: "duration")
    )
    package var batchLatency = "5s"

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
    package var lease = "15s"

    @Option(
        help: ArgumentHelp(
            "grouped (fixes committed together every --commit-interval: a power cut loses at most that interval's, "
                + "and the disk gets under 1 KB a fix) or full (a commit per fix: a power cut loses none, about 10 KB a fix).",
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

    package func validate() throws { try JournalLink.validate(self) }
}
