import ArgumentParser
import FoundationEssentials
import LocationKeepAlive

/// The journal and its destinations, shared by `run` and `upload`.
struct DeliveryOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The fix journal, a SQLite file (default: $XDG_STATE_HOME/keepalive/journal.sqlite).", valueName: "path"
        )
    )
    var journal: String?

    @Option(
        name: .customLong("deliver"),
        help: ArgumentHelp(
            "Deliver fixes to a server: NAME=URL, with URL mqtt[s]://[user@]host[:port]/owntracks/USER/DEVICE, "
                + "owntracks+http[s]://host:port/pub?user=U&device=D or traccar+http[s]://host:5055/?id=DEVICE "
                + "(options: password-file=PATH, ca=PATH, tid=XX). Repeat for several.",
            valueName: "name=url"
        )
    )
    var destinations: [String] = []

    @Option(name: .customLong("batch-threshold"), help: "Send as soon as this many fixes wait.")
    var batchThreshold = 10

    @Option(
        name: .customLong("batch-latency"),
        help: ArgumentHelp("...or as soon as the oldest has waited this long.", valueName: "duration")
    )
    var batchLatency = "5s"

    @Option(name: .customLong("batch-max"), help: "At most this many fixes in one batch.")
    var batchMax = 100

    @Option(name: .customLong("max-refusals"), help: "A fix refused this many times goes to the dead letters.")
    var maxRefusals = 3

    @Option(
        name: .customLong("lease"),
        help: ArgumentHelp(
            "How long a delivering process's claim on a destination lasts unless renewed.", valueName: "duration",
            visibility: .hidden
        )
    )
    var lease = "15s"

    @Option(
        help: "full (a stored fix survives a power cut) or normal (it survives a crash; a power cut may lose the last ones)."
    )
    var durability = "full"

    /// Whether `run` should journal at all.
    var isRequested: Bool { journal != nil || !destinations.isEmpty }

    func validate() throws {
        for destination in try parsedDestinations() {
            do { try destination.checkCredentials() } catch { throw ValidationError("--deliver \(destination.name): \(error)") }
        }
        _ = try policy()
        guard JournalDurability(rawValue: durability) != nil else { throw ValidationError("--durability takes full or normal") }
    }

    func parsedDestinations() throws -> [Destination] {
        var names = Set<String>()
        return try destinations.map { text in
            guard let equals = text.firstIndex(of: "=") else {
                throw ValidationError("--deliver takes NAME=URL (for example home=mqtt://localhost/owntracks/me/phone)")
            }
            let name = String(text[..<equals])
            guard names.insert(name).inserted else { throw ValidationError("--deliver: the name \(name) is given twice") }
            do {
                return try Destination(name: name, url: String(text[text.index(after: equals)...]))
            } catch {
                throw ValidationError("--deliver: \(error)")
            }
        }
    }

    func policy() throws -> DeliveryPolicy {
        var policy = DeliveryPolicy()
        guard batchThreshold >= 1, batchMax >= 1, maxRefusals >= 1 else {
            throw ValidationError("--batch-threshold, --batch-max and --max-refusals take a number of at least 1")
        }
        guard let latency = Duration(parsing: batchLatency) else {
            throw ValidationError("--batch-latency takes a duration such as 5s or 500ms")
        }
        policy.batchThreshold = batchThreshold
        policy.maximumBatch = batchMax
        policy.maximumLatency = latency
        policy.maximumRefusals = maxRefusals
        guard let lease = Duration(parsing: lease), lease >= .seconds(1) else {
            throw ValidationError("--lease takes a duration of at least 1s")
        }
        policy.leaseDuration = lease
        return policy
    }

    var path: String { journal ?? FixJournal.defaultPath }

    func openJournal() throws -> FixJournal {
        try FixJournal(path: path, durability: JournalDurability(rawValue: durability) ?? .full)
    }

    /// The destinations given, or with none given those the journal already has.
    func destinations(in journal: FixJournal) throws -> [Destination] {
        let given = try parsedDestinations()
        guard given.isEmpty else { return given }
        return try journal.destinations().map { try Destination(name: $0.name, url: $0.settings) }
    }
}
