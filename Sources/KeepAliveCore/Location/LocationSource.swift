public import FoundationEssentials

/// Where reports come from: gpsd, an NMEA log, or a test double.
///
/// Each call to ``events()`` starts one session (one gpsd watch, one pass over a log); it
/// ends when the consumer stops iterating. A source that cannot start at all (gpsd down
/// at the first attempt, a missing log) ends the stream with a ``LocationError``.
public protocol LocationSource: Sendable {
    /// Starts a session and streams its events.
    func events() -> AsyncThrowingStream<SourceEvent, any Error>

    /// Runs a session, handing each event to `handler` on the source's own thread, until the
    /// source ends (returns or throws) or the calling task is cancelled.
    ///
    /// The manager uses this: a source that reads on a thread of its own (gpsd) then costs no
    /// hop per event. The default iterates ``events()``.
    func run(_ handler: @escaping @Sendable (SourceEvent) -> Void) async throws

    /// The date on the source's own clock now, against which fix ages are measured
    /// (``LocationFilter/maximumAge``, a one-shot's `maximumAge`).
    ///
    /// The one rule for fix ages: **a fix's age is its receiver's clock now less the fix's own
    /// time.** The receiver's clock is the source's: ``GPSDSource`` answers with the last fix
    /// time gpsd reported, moved on by the monotonic time since it came; ``NMEAReplaySource``
    /// with the moment of its log it is playing. Whatever year the receiver says (a log of 2017
    /// replayed or fed to gpsd by `gpsfake`, a receiver whose GPS week rolled over), the two
    /// readings come from one clock, so the age is right, and a replay and gpsd fed the same log
    /// answer a `maximumAge` alike; a system clock that is wrong (a board without a real-time
    /// clock) makes no fresh fix look old.
    ///
    /// gpsd's current fix (its answer to `?POLL`) is aged on the same clock. Before the source has
    /// seen a fix there is no receiver's clock yet: gpsd's own clock then says how long ago gpsd
    /// got the fix where it agrees with the receiver's (a receiver gone quiet leaves its last fix
    /// in gpsd, never delivered as new), and where the two are more than a day apart (an old log,
    /// a clock never set) the fix is taken as current, as the receiver's next report would be.
    ///
    /// `nil` (the default, for a source with no clock of its own, and gpsd's before its first
    /// fix with a time, when it has no fix to age) measures ages against the manager's
    /// `wallClock`, and a one-shot that fails for age says which clock measured it.
    var currentDate: Date? { get }

    /// Whether the source is a receiver that rests while nobody watches it (gpsd closes the
    /// device 60 s after its last watcher goes), so that a monitor's stationary pause saves
    /// something.
    ///
    /// `false`, the default: a replay or a test's script plays on whether watched or not, so a
    /// `LocationMonitor` never pauses on it (a pause would wait on the wall clock for checks a
    /// finished log cannot answer) and ends when it ends. ``GPSDSource`` says `true`.
    var restsWhenUnwatched: Bool { get }
}

extension LocationSource {
    /// By default, none: ages are measured against the manager's wall clock.
    public var currentDate: Date? { nil }

    /// By default, no: a monitor watching it never pauses.
    public var restsWhenUnwatched: Bool { false }

    /// By default, the events of ``events()`` handed over one at a time.
    public func run(_ handler: @escaping @Sendable (SourceEvent) -> Void) async throws {
        for try await event in events() { handler(event) }
    }
}

/// One thing a source says.
public enum SourceEvent: Sendable, Hashable {
    /// What the receiver reported.
    case report(FixReport)
    /// Something about the source itself: connected, lost, reconnecting, finished.
    case status(LocationStatus)
}

/// News about the source or the fix that is not a location.
public enum LocationStatus: Sendable, Hashable, CustomStringConvertible {
    /// Connected and watching; the text names the server, such as `gpsd 3.22 at localhost:2947`.
    case connected(String)
    /// The receiver reports no fix, and has not had one in this session.
    case noFix
    /// The receiver had a fix and lost it. The last fix is not delivered again.
    case fixLost
    /// The connection broke or went silent.
    case connectionLost(LocationError)
    /// The next connection attempt, after a delay that grows to a cap.
    case reconnecting(attempt: Int, delay: Duration)
    /// A replayed log ended; the counts say what was in it.
    case replayFinished(NMEAStatistics)
    /// A looping replay started its log again (`pass` 2 is the first repeat); report times
    /// are shifted by `shift` so they keep increasing.
    case replayLooped(pass: Int, shift: Duration)
    /// The app's location authorization changed (another process, a prompt, a policy).
    case authorizationChanged(LocationAuthorization)
    /// Fixes are held back, and why (when-in-use authorization while in the background).
    case paused(String)
    /// Fixes flow again after a pause.
    case resumed
    /// The receiver's time went back from `from` (the newest fix the stream delivered) to `to`:
    /// a looped log (gpsfake loops by default), or a receiver that lost its time. What the
    /// stream does next is its filter's ``LocationFilter/whenTimeGoesBack``.
    case receiverTimeWentBack(from: Date, to: Date)

    /// In words, as the CLI prints it.
    public var description: String {
        switch self {
        case .connected(let server): "connected to \(server)"
        case .noFix: "no fix"
        case .fixLost: "fix lost"
        case .connectionLost(let error): error.message
        case .reconnecting(let attempt, let delay): "reconnecting (attempt \(attempt)) in \(delay.secondsText)"
        case .replayFinished(let statistics): "replay finished: \(statistics)"
        case .replayLooped(let pass, let shift):
            "replay restarted (pass \(pass)), times shifted by \(shift.secondsText)"
        case .authorizationChanged(let status): "authorization changed to \(status)"
        case .paused(let reason): "paused: \(reason)"
        case .resumed: "resumed"
        case .receiverTimeWentBack(let from, let to):
            "the receiver's time went back \(Duration.seconds(from.timeIntervalSince(to)).secondsText) "
                + "(a looped log, or a receiver that lost its time)"
        }
    }
}

/// What a decoder met in an NMEA stream.
public struct NMEAStatistics: Sendable, Hashable, CustomStringConvertible {
    /// Sentences with a valid checksum.
    public var sentences = 0
    /// Sentences skipped for a bad checksum.
    public var badChecksums = 0
    /// Sentences skipped for a missing checksum (often truncated).
    public var missingChecksums = 0
    /// Sentences whose fields could not be read.
    public var malformed = 0
    /// `#` comment lines.
    public var comments = 0
    /// Stretches of bytes that were not NMEA (binary junk, noise).
    public var junk = 0
    /// Epochs reported.
    public var reports = 0
    /// Why reading stopped before the end of the input, if it did.
    public var readError: String?

    /// All counts at zero.
    public init() {}

    /// Counts one decoding failure.
    public mutating func count(_ error: NMEAError) {
        switch error.code {
        case .badChecksum: badChecksums += 1
        case .missingChecksum: missingChecksums += 1
        default: malformed += 1
        }
    }

    /// In words: sentences, reports and what was skipped.
    public var description: String {
        "\(sentences) sentences, \(reports) reports, \(badChecksums) bad checksums, "
            + "\(missingChecksums) missing checksums, \(malformed) malformed, \(junk) junk"
            + (readError.map { "; reading stopped: \($0)" } ?? "")
    }
}
