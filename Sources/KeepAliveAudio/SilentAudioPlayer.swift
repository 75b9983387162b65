public import FoundationEssentials
import Dispatch
public import KeepAliveCore

/// Plays silence for real: through ALSA (S16_LE, 44.1 kHz, mono by default), or into a WAV file.
///
/// A pulse lasts its length on the clock even where the device swallows samples faster than
/// real time (ALSA's `null` does): writes are paced, at most one 50 ms chunk ahead. ALSA calls
/// run on a private queue, never on the cooperative thread pool.
public final class SilentAudioPlayer: Sendable {
    /// Where the silence goes.
    public enum Output: Sendable, Hashable, CustomStringConvertible {
        /// An ALSA PCM: `default` (PipeWire or PulseAudio where they run), `null`, `hw:0`...
        case alsa(device: String)
        /// A WAV file, for checking with sox.
        case wav(URL)

        /// `ALSA DEVICE` or `WAV PATH`.
        public var description: String {
            switch self {
            case .alsa(let device): "ALSA \(device)"
            case .wav(let url): "WAV \(url.path)"
            }
        }
    }

    /// Where the silence goes.
    public let output: Output
    /// Frames a second.
    public let sampleRate: Int
    /// 1 (mono) or 2.
    public let channels: Int
    /// Keep the device open and prepared between pulses, instead of draining and closing it.
    public let keepsDeviceOpen: Bool
    private let time: TimeSource
    private let queue: DispatchQueue
    private let state = Locked(State())

    private struct State {
        var sink: Sink?
        var loop: Task<Void, Never>?
        var pulses = 0
        var playedFrames = 0
    }

    /// A player for `output`; nothing is opened until the first pulse.
    public init(
        output: Output = .alsa(device: "default"),
        sampleRate: Int = 44_100,
        channels: Int = 1,
        keepsDeviceOpen: Bool = false,
        clock: some Clock<Duration> = DispatchClock()
    ) {
        self.output = output
        self.sampleRate = sampleRate
        self.channels = channels
        self.keepsDeviceOpen = keepsDeviceOpen
        self.time = TimeSource(clock)
        self.queue = DispatchQueue(label: "LocationKeepAlive.audio")
    }

    deinit {
        let sink = state.withLock { state in
            state.loop?.cancel()
            return state.sink
        }
        // On the queue, after any write or drain still running there: the device is only ever
        // touched from the queue (an abandoned write may still be in the driver).
        if let sink { queue.async { sink.close() } }
    }

    /// Pulses played, and seconds of silence written.
    public var playedPulses: Int { state.withLock { $0.pulses } }
    /// Seconds of silence played so far.
    public var playedSeconds: Double { Double(state.withLock { $0.playedFrames }) / Double(sampleRate) }

    /// Plays `length` of silence and returns when it has played.
    public func playPulse(length: Duration) async throws(AudioError) {
        let sink = try await openSink()
        let frames = Int((length.seconds * Double(sampleRate)).rounded())
        let start = time.now()
        do {
            try await play(frames: frames, on: sink, from: start, until: { false })
            try? await time.sleepUntil(start + length)  // the last chunk's own time
        } catch {
            await finish(sink, keepOpen: false)
            throw error
        }
        state.withLock { $0.pulses += 1 }
        await finish(sink, keepOpen: keepsDeviceOpen)
    }

    /// Starts playing silence continuously, a chunk at a time, until ``stopLoop()``.
    public func startLoop() async throws(AudioError) {
        guard state.withLock({ $0.loop == nil }) else { return }
        let sink = try await openSink()
        let loop = Task { [self] in
            do {
                try await play(frames: .max, on: sink, from: time.now(), until: { Task.isCancelled })
            } catch {}
        }
        state.withLock { $0.loop = loop }
    }

    /// Stops the loop and releases the device.
    public func stopLoop() async {
        guard
            let loop = state.withLock({ state -> Task<Void, Never>? in
                defer { state.loop = nil }
                return state.loop
            })
        else { return }
        loop.cancel()
        await loop.value
        if let sink = state.withLock({ $0.sink }) { await finish(sink, keepOpen: false) }
    }

    /// Whether a device is open now (a pulse playing, the loop, or kept open).
    public var isDeviceOpen: Bool { state.withLock { $0.sink != nil } }

    // MARK: The device

    private func openSink() async throws(AudioError) -> Sink {
        if let sink = state.withLock({ $0.sink }) { return sink }
        let result: Result<Sink, AudioError>? = await onQueue(within: Self.deviceTimeout) {
            [output, sampleRate, channels] in
            do throws(AudioError) {
                switch output {
                case .alsa(let device):
                    return .success(.alsa(try ALSAPlayback(device: device, sampleRate: sampleRate, channels: channels)))
                case .wav(let url):
                    return .success(.wav(try WAVSink(url: url, sampleRate: sampleRate, channels: channels)))
                }
            } catch {
                return .failure(error)
            }
        } abandoned: { late in
            if case .success(let sink) = late { sink.close() }  // opened after we gave up
        }
        guard let result else {
            throw AudioError.cannotOpen(
                device: output.description,
                reason: "it did not open within \(Self.deviceTimeout.secondsText) (busy or hung)"
            )
        }
        let sink = try result.get()
        state.withLock { $0.sink = sink }
        return sink
    }

    /// Writes silence paced on the clock: never more than one chunk ahead of real time.
    private func play(
        frames: Int,
        on sink: Sink,
        from start: Duration,
        until stop: @Sendable () -> Bool
    )
        async throws(AudioError)
    {
        var written = 0
        let chunk = sink.chunkFrames
        var stalledSince: Duration?
        while written < frames, !stop() {
            let wanted = min(chunk, frames - written)
            let outcome = await onQueue(within: Self.deviceTimeout) { () -> Result<Int, AudioError> in
                do throws(AudioError) { return .success(try sink.writeSilence(frames: wanted)) } catch {
                    return .failure(error)
                }
            }
            guard let outcome else {
                throw AudioError.deviceLost(
                    device: output.description,
                    reason: "a write did not return within \(Self.deviceTimeout.secondsText)"
                )
            }
            let count = try outcome.get()
            written += count
            state.withLock { $0.playedFrames += count }
            if count == 0 {
                let now = time.now()
                if let since = stalledSince, now - since > .seconds(2) {
                    throw AudioError.deviceLost(device: output.description, reason: "no room in its buffer for 2 s")
                }
                stalledSince = stalledSince ?? now
            } else {
                stalledSince = nil
            }
            let aheadUntil =
                start + .seconds(Double(written) / Double(sampleRate)) - .seconds(Double(chunk) / Double(sampleRate))
            do { try await time.sleepUntil(aheadUntil) } catch { return }
        }
    }

    private func finish(_ sink: Sink, keepOpen: Bool) async {
        // Bounded: a device that hung in a write must not hang the pulse's end too.
        if keepOpen {
            _ = await onQueue(within: Self.deviceTimeout) { sink.stopAndPrepare() }
        } else {
            state.withLock { $0.sink = nil }
            _ = await onQueue(within: Self.deviceTimeout) {
                sink.drain()
                sink.close()
            }
        }
    }

    /// How long an open or a write may block before the device counts as busy or gone.
    static let deviceTimeout: Duration = .seconds(2)

    /// Runs `work` on the queue, or gives up after `limit` (a device that blocks in the driver
    /// cannot be interrupted): `nil`, and `abandoned` gets the result whenever it comes.
    private func onQueue<T: Sendable>(
        within limit: Duration,
        _ work: @escaping @Sendable () -> T,
        abandoned: @escaping @Sendable (T) -> Void = { _ in }
    ) async -> T? {
        let race = Race<T>()
        let timer = Task { [time] in
            try? await time.sleep(limit)
            if !Task.isCancelled { race.finish(nil) }
        }
        defer { timer.cancel() }
        await withCheckedContinuation { continuation in
            race.wait(continuation)
            queue.async {
                let value = work()
                if !race.finish(value) { abandoned(value) }
            }
        }
        return race.value
    }

    /// The first of a result and a timeout, delivered once. The value travels under the lock,
    /// not through the continuation, so it is ordered for ThreadSanitizer too.
    private final class Race<T: Sendable>: Sendable {
        private let state = Locked<(waiter: CheckedContinuation<Void, Never>?, done: Bool, value: T?)>(
            (nil, false, nil)
        )

        func wait(_ continuation: CheckedContinuation<Void, Never>) {
            let early = state.withLock { state -> Bool in
                if state.done { return true }
                state.waiter = continuation
                return false
            }
            if early { continuation.resume() }
        }

        /// - Returns: `false` when the other side had already finished.
        @discardableResult
        func finish(_ value: T?) -> Bool {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>?? in
                guard !state.done else { return .none }
                state.done = true
                state.value = value
                defer { state.waiter = nil }
                return .some(state.waiter)
            }
            guard let waiter else { return false }
            waiter?.resume()
            return true
        }

        /// The result, or `nil` when the timeout came first.
        var value: T? { state.withLock { $0.value } }
    }
}

/// An open output, used on the player's queue only.
enum Sink: @unchecked Sendable {
    // Both cases are confined to the player's serial queue (see SilentAudioPlayer.onQueue(within:)).
    case alsa(ALSAPlayback)
    case wav(WAVSink)

    var chunkFrames: Int {
        switch self {
        case .alsa(let playback): playback.chunkFrames
        case .wav(let sink): sink.chunkFrames
        }
    }

    func writeSilence(frames: Int) throws(AudioError) -> Int {
        switch self {
        case .alsa(let playback): try playback.writeSilence(frames: frames, timeout: .milliseconds(100))
        case .wav(let sink): try sink.writeSilence(frames: frames)
        }
    }

    func drain() { if case .alsa(let playback) = self { playback.drain() } }

    func stopAndPrepare() { if case .alsa(let playback) = self { playback.stopAndPrepare() } }

    func close() {
        switch self {
        case .alsa(let playback): playback.close()
        case .wav(let sink): sink.close()
        }
    }
}
