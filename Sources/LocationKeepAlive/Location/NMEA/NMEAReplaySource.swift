public import FoundationEssentials

/// Reports decoded natively from an NMEA 0183 log, no gpsd needed.
///
/// Paced by the receiver's own times: at recorded speed (`speed` 1), faster or slower by a
/// factor, or as fast as possible (`speed` 0), on the injected clock, so tests run in virtual
/// time. Gaps longer than ``maximumGap`` (a log of several captures) and times that go
/// backwards are replayed as ``maximumGap`` and no wait. Bad sentences are counted and skipped.
public struct NMEAReplaySource: LocationSource {
    public let file: URL
    /// 1 replays at recorded speed, 10 ten times faster, 0 as fast as possible.
    public var speed: Double
    /// The longest wait between two reports at speed 1.
    public var maximumGap: Duration
    private let time: TimeSource

    public init(
        file: URL,
        speed: Double = 1,
        maximumGap: Duration = .seconds(5),
        clock: some Clock<Duration> = ContinuousClock()
    ) {
        self.file = file
        self.speed = speed
        self.maximumGap = maximumGap
        self.time = TimeSource(clock)
    }

    public func events() -> AsyncThrowingStream<SourceEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: SourceEvent.self)
        let task = Task {
            do {
                try await replay(into: continuation)
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    private func replay(into continuation: AsyncThrowingStream<SourceEvent, any Error>.Continuation) async throws {
        guard speed >= 0, speed.isFinite else {
            throw LocationError.invalidOptions("replay speed must be 0 (as fast as possible) or more, not \(speed)")
        }
        let bytes: [UInt8]
        do {
            bytes = Array(try Data(contentsOf: file))
        } catch {
            throw LocationError(.replayFailed, "cannot read NMEA log \(file.path): \(error.fileErrorText)")
        }
        var decoder = NMEADecoder(bytes: bytes, device: file.lastPathComponent)
        var previousTime: Int?
        var emitted = 0
        // Deadlines add up from the start, so waits do not drift, and a late wake-up is caught up.
        var deadline = time.now()
        while let report = decoder.next() {
            if speed > 0, let millis = report.time.map({ Int(($0.timeIntervalSince1970 * 1000).rounded()) }) {
                if let previous = previousTime {
                    let gap = min(Duration.milliseconds(max(0, millis - previous)), maximumGap)
                    if gap > .zero {
                        deadline += gap / speed
                        try await time.sleepUntil(deadline)
                    }
                }
                previousTime = millis
            }
            try Task.checkCancellation()
            continuation.yield(.report(report))
            emitted += 1
            if speed == 0, emitted % 256 == 0 { await Task.yield() }
        }
        let statistics = decoder.statistics
        continuation.yield(.status(.replayFinished(statistics)))
    }
}
