import Foundation
import LocationKeepAlive
import IntegrationSupport
import Testing

/// Silence played for real, through ALSA's `null` device (no sound card needed) and into WAV.
@Suite(.timeLimit(.minutes(3)))
struct SilentAudioTests {
    @Test(arguments: [false, true])
    func aPulseOnTheNullDeviceLastsItsLength(keepsDeviceOpen: Bool) async throws {
        let player = SilentAudioPlayer(output: .alsa(device: "null"), keepsDeviceOpen: keepsDeviceOpen)
        var durations: [Duration] = []
        for _ in 0..<3 {
            let started = ContinuousClock.now
            try await player.playPulse(length: .milliseconds(200))
            durations.append(ContinuousClock.now - started)
        }
        // Paced: never shorter than its length, however fast the device swallows samples (no upper
        // bound here: that is a benchmark's business, and a loaded machine only makes it later).
        #expect(durations.allSatisfy { $0 >= .milliseconds(200) }, "\(durations)")
        #expect(player.playedPulses == 3)
        #expect(abs(player.playedSeconds - 0.6) < 0.001, "every sample written: \(player.playedSeconds) s")
        #expect(player.isDeviceOpen == keepsDeviceOpen)
        print("pulse on null, device \(keepsDeviceOpen ? "kept open" : "closed after each"): \(durations)")
    }

    @Test func theLoopPlaysUntilStopped() async throws {
        let player = SilentAudioPlayer(output: .alsa(device: "null"))
        let started = ContinuousClock.now
        try await player.startLoop()
        try await Task.sleep(for: .milliseconds(500))
        await player.stopLoop()
        let elapsed = (ContinuousClock.now - started).seconds
        let played = player.playedSeconds
        #expect(played > 0)
        #expect(
            played <= elapsed + 0.05 + 0.001,
            "at most one 50 ms chunk ahead of real time: \(played) s in \(elapsed) s"
        )
        #expect(!player.isDeviceOpen)
        let after = player.playedSeconds
        try await Task.sleep(for: .milliseconds(100))
        #expect(player.playedSeconds == after, "nothing plays after stop")
    }

    @Test func aMissingDeviceIsAClearError() async {
        let player = SilentAudioPlayer(output: .alsa(device: "hw:77,0"))
        let error = await #expect(throws: AudioError.self) { try await player.playPulse(length: .milliseconds(200)) }
        #expect(error?.code == .cannotOpen)
        #expect(error?.message.contains("cannot open audio device 'hw:77,0'") == true)
        #expect(!player.isDeviceOpen)
    }

    @Test func aWAVFileHoldsExactlyThePulsesSilence() async throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("pulse-\(UUID().uuidString).wav")
        defer { try? FileManager.default.removeItem(at: url) }
        let player = SilentAudioPlayer(output: .wav(url))
        try await player.playPulse(length: .milliseconds(200))
        let data = try Data(contentsOf: url)
        #expect(data.count == 44 + 8_820 * 2, "0.2 s at 44.1 kHz, mono, 16 bit")
        #expect(String(decoding: data.prefix(4), as: UTF8.self) == "RIFF")
        #expect(data.dropFirst(44).allSatisfy { $0 == 0 })
    }
}
