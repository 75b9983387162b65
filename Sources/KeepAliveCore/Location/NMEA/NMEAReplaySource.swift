public import FoundationEssentials

/// Reports decoded natively from an NMEA 0183 log, no gpsd needed: one receiver playing
/// one log, read as it plays in constant memory: a file, or a stream (a pipe, a FIFO,
/// `/dev/stdin`, a serial device) read as its bytes come.
///
/// The log starts playing at ``start()`` or at the first session, whichever comes first,
/// and goes on on its own clock whether or not anyone listens. Every session, one-shot and
/// consumer sees the report of that moment in the log, as a gpsd client sees the receiver's
/// current fix: a session that starts 10 s later begins 10 s into the log, and stopping and
/// starting sessions never rewinds it. Copies of a source share that one receiver.
///
/// Paced by the receiver's own times: at recorded speed (`speed` 1), faster or slower by a
/// factor, or as fast as possible (`speed` 0, where the log is a queue: every report is
/// handed out once, in order, across sessions). Gaps longer than ``maximumGap`` (a log of
/// several captures) and times that go backwards are replayed as ``maximumGap`` and no wait.
/// Bad sentences are counted and skipped. At the end every session gets
/// ``LocationStatus/replayFinished(_:)`` and ends; with `loops` the log starts again instead
/// (``LocationStatus/replayLooped(pass:shift:)``), its times shifted so they keep increasing.
public struct NMEAReplaySource: LocationSource {
    /// The log (a file, or a stream such as `/dev/stdin`).
    public var file: URL { player.file }
    /// 1 replays at recorded speed, 10 ten times faster, 0 as fast as possible.
    public var speed: Double { player.speed }
    /// The longest wait between two reports at speed 1.
    public var maximumGap: Duration { player.maximumGap }
    /// Whether the log starts again at its end.
    public var loops: Bool { player.loops }
    private let player: NMEAReplayPlayer
    private let time: TimeSource

    /// A replay of `file`; nothing is read until ``start()`` or the first session.
    public init(
        file: URL,
        speed: Double = 1,
        maximumGap: Duration = .seconds(5),
        loops: Bool = false,
        clock: some Clock<Duration> = DispatchClock()
    ) {
        player = NMEAReplayPlayer(file: file, speed: speed, maximumGap: maximumGap, loops: loops)
        time = TimeSource(clock)
    }

    /// Starts the log now, if no session has started it yet (a service calls this when it
    /// starts, so its first poll finds the log where a receiver would be).
    ///
    /// - Throws: ``LocationError`` when the log cannot be read or the speed is invalid.
    public func start() throws(LocationError) {
        try player.start(at: time.now())
    }

    /// The log's time now: the time of the latest report played, plus the time since it at the
    /// replay's speed (at speed 0, where there is no clock, that report's time); `nil` before the
    /// log has started or before its first timed report.
    ///
    /// The manager measures fix ages against it, so `maximumAge` means for a replay what it
    /// means for a live receiver: the fix of this moment in the log is fresh.
    public var currentDate: Date? { player.date(at: time.now()) }

    /// The events of a session, as a stream.
    public func events() -> AsyncThrowingStream<SourceEvent, any Error> {
        if speed == 0 {
            // Pulled one at a time: a consumer that stops early leaves the rest for the next session.
            let (player, time) = (player, time)
            let ended = Locked(false)
            return AsyncThrowingStream {
                guard !ended.withLock({ $0 }) else { return nil }
                try player.start(at: time.now())
                while true {
                    if let entry = player.take() {
                        if case .status(.replayFinished) = entry.event { ended.withLock { $0 = true } }
                        return entry.event
                    }
                    guard player.isWaitingForInput else { return nil }
                    try await Task.sleep(for: NMEAReplayPlayer.inputPoll)
                }
            }
        }
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: SourceEvent.self)
        let task = Task {
            do {
                try await play { _ = continuation.yield($0) }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// The events of a session, handed over as they come.
    public func run(_ handler: @escaping @Sendable (SourceEvent) -> Void) async throws {
        try await play(handler)
    }

    /// One session: from the log's current moment to its end (or until cancelled).
    private func play(_ deliver: (SourceEvent) -> Void) async throws {
        try start()
        if speed == 0 {
            var taken = 0
            while true {
                guard let entry = player.take() else {
                    guard player.isWaitingForInput else { return }
                    try await Task.sleep(for: NMEAReplayPlayer.inputPoll)
                    continue
                }
                try Task.checkCancellation()
                deliver(entry.event)
                if case .status(.replayFinished) = entry.event { return }
                taken += 1
                if taken % 256 == 0 { await Task.yield() }
            }
            return
        }
        let startedAt = player.startedAt ?? time.now()
        var seen: Int?
        while true {
            let step = player.advance(to: time.now(), after: seen)
            for entry in step.entries { deliver(entry.event) }
            seen = step.seenThrough
            guard let next = step.nextDue else {
                guard step.isWaitingForInput else { return }
                try await Task.sleep(for: NMEAReplayPlayer.inputPoll)
                continue
            }
            // Deadlines come from the log's start, so waits do not drift and a late wake-up catches up.
            try await time.sleepUntil(startedAt + next)
        }
    }
}
