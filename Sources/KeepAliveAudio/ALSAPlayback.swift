internal import CALSA
import FoundationEssentials

/// One ALSA playback stream of silence: the only file with ALSA calls and pointers.
///
/// Non-blocking: a write that would block waits with `snd_pcm_wait` up to a deadline instead.
/// Every method must be called on one serial queue (the player's); that confinement is what
/// makes the unchecked `Sendable` safe.
final class ALSAPlayback: @unchecked Sendable {
    let device: String
    let sampleRate: Int
    let channels: Int
    private var pcm: OpaquePointer?
    private let silence: [Int16]

    /// Opens and configures the device. The corresponding C functions are `snd_pcm_open` and
    /// `snd_pcm_set_params`.
    init(
        device: String,
        sampleRate: Int = 44_100,
        channels: Int = 1,
        latency: Duration = .milliseconds(100)
    )
        throws(AudioError)
    {
        Self.quietLibrary
        self.device = device
        self.sampleRate = sampleRate
        self.channels = channels
        silence = [Int16](repeating: 0, count: sampleRate / 20 * channels)  // 50 ms
        var handle: OpaquePointer?
        let opened = calsa_open_playback(&handle, device)
        guard opened >= 0, let handle else {
            throw AudioError.cannotOpen(device: device, reason: Self.describe(opened))
        }
        pcm = handle
        let microseconds = UInt32(
            latency.components.seconds * 1_000_000 + latency.components.attoseconds / 1_000_000_000_000
        )
        let configured = calsa_configure(handle, UInt32(channels), UInt32(sampleRate), microseconds)
        guard configured >= 0 else {
            close()
            throw AudioError.cannotOpen(device: device, reason: Self.describe(configured))
        }
    }

    deinit { close() }

    /// Frames of silence in one chunk.
    var chunkFrames: Int { silence.count / channels }

    /// Writes `frames` of silence (at most one chunk), waiting up to `timeout` for room.
    /// The corresponding C functions are `snd_pcm_writei`, `snd_pcm_wait` and `snd_pcm_recover`.
    func writeSilence(frames: Int, timeout: Duration) throws(AudioError) -> Int {
        guard let pcm else { throw AudioError.deviceLost(device: device, reason: "closed") }
        let count = min(frames, chunkFrames)
        let waitMilliseconds = Int32(
            max(1, timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        )
        for _ in 0..<3 {
            let written = silence.withUnsafeBytes { snd_pcm_writei(pcm, $0.baseAddress, snd_pcm_uframes_t(count)) }
            if written >= 0 { return Int(written) }
            if written == -Int(EAGAIN) {
                if snd_pcm_wait(pcm, waitMilliseconds) == 0 { return 0 }  // no room before the deadline
                continue
            }
            // An underrun (EPIPE) or a suspend (ESTRPIPE) is recoverable; anything else is the device going away.
            if snd_pcm_recover(pcm, Int32(written), 1) < 0 {
                throw AudioError.deviceLost(device: device, reason: Self.describe(Int32(written)))
            }
        }
        return 0
    }

    /// Lets queued samples play out. The corresponding C function is `snd_pcm_drain`.
    func drain() {
        guard let pcm else { return }
        _ = snd_pcm_nonblock(pcm, 0)  // drain on a non-blocking stream returns at once
        _ = snd_pcm_drain(pcm)
        _ = snd_pcm_nonblock(pcm, 1)
    }

    /// Stops at once and readies the stream for the next write. The corresponding C functions
    /// are `snd_pcm_drop` and `snd_pcm_prepare`.
    func stopAndPrepare() {
        guard let pcm else { return }
        _ = snd_pcm_drop(pcm)
        _ = snd_pcm_prepare(pcm)
    }

    /// The corresponding C function is `snd_pcm_close`.
    func close() {
        guard let pcm else { return }
        snd_pcm_close(pcm)
        self.pcm = nil
    }

    private static func describe(_ code: Int32) -> String {
        String(cString: snd_strerror(code))
    }

    private static let quietLibrary: Void = { calsa_silence_library_errors() }()
}
