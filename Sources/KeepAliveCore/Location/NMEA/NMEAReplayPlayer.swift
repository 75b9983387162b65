import FoundationEssentials

/// The one receiver behind an ``NMEAReplaySource``: a log playing on its own clock.
///
/// Every session reads the same timeline, as every gpsd client reads the same receiver: a
/// session that starts late begins with the report of that moment, and starting or stopping
/// sessions never rewinds the log. At speed 0 there is no clock: the log is a queue, each
/// report handed out once, in order, across sessions.
final class NMEAReplayPlayer: Sendable {
    /// One thing on the timeline, due at an elapsed time of the player's clock.
    struct Entry: Sendable {
        let sequence: Int
        let due: Duration
        let event: SourceEvent
    }

    /// What a session gets from one look at the timeline.
    struct Step: Sendable {
        var entries: [Entry] = []
        /// The last sequence number due: where the session goes on from.
        var seenThrough: Int?
        /// When the next entry is due (elapsed since the player started), `nil` at the end.
        var nextDue: Duration?
        /// The log is a stream with nothing new yet: look again soon.
        var isWaitingForInput = false
        var isFinished: Bool { nextDue == nil && !isWaitingForInput }
    }

    let file: URL
    let speed: Double
    let maximumGap: Duration
    let loops: Bool
    /// The pause between the end of a pass and the start of the next, in the log's time.
    let loopPause: Duration = .seconds(1)
    private let state = Locked(State())
    /// Entries kept for sessions a little behind (a slow consumer loses the oldest, as with gpsd).
    private let history = 256

    private struct State {
        var startedAt: Duration?
        var decoder: NMEADecoder?
        var pending: Entry?
        var recent: [Entry] = []
        var nextSequence = 0
        var due: Duration = .zero
        var previousMillis: Int?
        var pass = 1
        /// Added to every report time in this pass, so times keep increasing across passes.
        var shift: Duration = .zero
        var passFirstMillis: Int?
        var ended = false
        /// The latest timed report handed out, and when it was due: the log's clock.
        var clockMark: (time: Date, due: Duration)?

        mutating func noteHandedOut(_ entry: Entry) {
            if case .report(let report) = entry.event, let time = report.time { clockMark = (time, entry.due) }
        }
    }

    init(file: URL, speed: Double, maximumGap: Duration, loops: Bool) {
        self.file = file
        self.speed = speed
        self.maximumGap = maximumGap
        self.loops = loops
    }

    /// Starts the log at `now` if it has not started; later calls change nothing.
    func start(at now: Duration) throws(LocationError) {
        try state.withLock { state throws(LocationError) in
            guard state.startedAt == nil else { return }
            guard speed >= 0, speed.isFinite else {
                throw LocationError.invalidOptions("replay speed must be 0 (as fast as possible) or more, not \(speed)")
            }
            let input = try NMEAInput(file: file)
            if loops, input.isStream {
                throw LocationError.invalidOptions(
                    "a log can loop only from a file it can read again, and \(file.path) is a stream "
                        + "(a pipe, a FIFO or a device): drop the loop, or save the log to a file first"
                )
            }
            state.decoder = NMEADecoder(input: input, device: file.lastPathComponent)
            state.startedAt = now
        }
    }

    /// The elapsed time at which the log started, once it has.
    var startedAt: Duration? { state.withLock { $0.startedAt } }

    /// What is due by `now` for a session that has seen up to `seen`.
    ///
    /// A new session (`seen` nil) gets only the latest report due, as a gpsd client gets the
    /// receiver's current fix, or the end of the log if it has come.
    func advance(to now: Duration, after seen: Int?) -> Step {
        state.withLock { state in
            catchUp(&state, to: now)
            var step = Step(seenThrough: state.recent.last?.sequence ?? seen, nextDue: peek(&state)?.due)
            step.isWaitingForInput = state.decoder?.isWaitingForInput == true
            if let seen {
                step.entries = state.recent.filter { $0.sequence > seen }
            } else if step.isFinished, let last = state.recent.last {
                step.entries = [last]
            } else if let current = state.recent.last(where: { if case .report = $0.event { true } else { false } }) {
                step.entries = [current]
            }
            return step
        }
    }

    /// Moves every entry due by `now` onto the timeline.
    private func catchUp(_ state: inout State, to now: Duration) {
        let elapsed = now - (state.startedAt ?? now)
        while let entry = peek(&state), entry.due <= elapsed {
            state.pending = nil
            state.noteHandedOut(entry)
            state.recent.append(entry)
            if state.recent.count > history { state.recent.removeFirst(state.recent.count - history) }
        }
    }

    /// The log's date at `now`: the latest report's time, plus the time since it was due at
    /// the replay's speed (speed 0: the latest report taken); `nil` before the first timed report.
    func date(at now: Duration) -> Date? {
        state.withLock { state in
            guard let startedAt = state.startedAt else { return nil }
            guard speed > 0 else { return state.clockMark?.time }
            catchUp(&state, to: now)
            guard let mark = state.clockMark else { return nil }
            return mark.time.addingTimeInterval(((now - startedAt) - mark.due).seconds * speed)
        }
    }

    /// The log is a stream with nothing new yet (``take()`` gave `nil`, but it is not the end).
    var isWaitingForInput: Bool { state.withLock { $0.decoder?.isWaitingForInput == true } }

    /// How often a session looks at a stream that had nothing: real time, as it is I/O.
    static let inputPoll: Duration = .milliseconds(50)

    /// Speed 0: the next entry of the shared queue, each handed out once, taken only when a
    /// consumer asks (nothing is lost in a buffer). The end of the log stays, for every session.
    func take() -> Entry? {
        state.withLock { state in
            guard let entry = peek(&state) else { return nil }
            if case .status(.replayFinished) = entry.event { return entry }
            state.pending = nil
            state.noteHandedOut(entry)
            return entry
        }
    }

    /// The next entry, decoded on demand: constant work per report, nothing decoded ahead.
    private func peek(_ state: inout State) -> Entry? {
        if let pending = state.pending { return pending }
        guard !state.ended, state.decoder != nil else { return nil }
        let event: SourceEvent
        if let report = state.decoder!.next() {
            event = .report(timed(report, &state))
        } else if state.decoder!.isWaitingForInput {
            return nil
        } else if loops, state.passFirstMillis != nil {
            event = restart(&state)
        } else {
            state.ended = true
            event = .status(.replayFinished(state.decoder!.statistics))
        }
        let entry = Entry(sequence: state.nextSequence, due: state.due, event: event)
        state.nextSequence += 1
        state.pending = entry
        return entry
    }

    /// Paces a report by the receiver's clock and shifts its time into the current pass.
    private func timed(_ report: FixReport, _ state: inout State) -> FixReport {
        guard let time = report.time else { return report }
        let millis = Int((time.timeIntervalSince1970 * 1000).rounded())
        if state.passFirstMillis == nil { state.passFirstMillis = millis }
        let shifted = millis + Int(state.shift / .milliseconds(1))
        if speed > 0, let previous = state.previousMillis {
            let gap = min(Duration.milliseconds(max(0, shifted - previous)), maximumGap)
            state.due += gap / speed
        }
        state.previousMillis = shifted
        guard state.shift > .zero else { return report }
        var report = report
        let seconds = Double(state.shift.components.seconds)
        report.time = time.addingTimeInterval(seconds)
        if var location = report.location {
            location.timestamp = location.timestamp?.addingTimeInterval(seconds)
            report.location = location
        }
        return report
    }

    /// The end of a pass with `loops`: the log starts again, its times shifted past the last.
    /// (A log with no timed report ends instead: it has no timeline to repeat.)
    private func restart(_ state: inout State) -> SourceEvent {
        if let first = state.passFirstMillis, let last = state.previousMillis {
            // The next pass starts one pause after the last report, in whole seconds.
            let lastInPass = last - Int(state.shift / .milliseconds(1))
            let length = Duration.milliseconds(lastInPass - first) + loopPause
            state.shift += .seconds((length / .seconds(1)).rounded(.up))
        }
        state.pass += 1
        state.passFirstMillis = nil
        do {
            state.decoder = NMEADecoder(input: try NMEAInput(file: file), device: file.lastPathComponent)
        } catch {
            // The file went away between passes: the replay ends here, saying why.
            var statistics = state.decoder!.statistics
            statistics.readError = error.message
            state.ended = true
            return .status(.replayFinished(statistics))
        }
        return .status(.replayLooped(pass: state.pass, shift: state.shift))
    }
}
