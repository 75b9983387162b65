import FoundationEssentials
import SystemPackage
import KeepAliveCore

/// Silence written to a WAV file instead of a device: sox can confirm its length and that
/// every sample is zero. Confined to the player's queue.
final class WAVSink: @unchecked Sendable {
    private let url: URL
    private let file: FileDescriptor
    private let sampleRate: Int
    private let channels: Int
    private var dataBytes = 0
    private let chunk: [UInt8]

    init(url: URL, sampleRate: Int, channels: Int) throws(AudioError) {
        self.url = url
        self.sampleRate = sampleRate
        self.channels = channels
        chunk = [UInt8](repeating: 0, count: sampleRate / 20 * channels * 2)
        do {
            file = try FileDescriptor.open(
                FilePath(url.path),
                .writeOnly,
                options: [.create, .truncate],
                permissions: [.ownerReadWrite, .groupRead, .otherRead]
            )
            _ = try file.writeAll(header(dataBytes: 0))
        } catch {
            throw AudioError(.cannotWrite, "cannot write WAV file \(url.path): \(error.fileErrorText)")
        }
    }

    var chunkFrames: Int { sampleRate / 20 }

    func writeSilence(frames: Int) throws(AudioError) -> Int {
        let count = min(frames, chunkFrames)
        do {
            _ = try file.writeAll(chunk.prefix(count * channels * 2))
            dataBytes += count * channels * 2
            _ = try file.writeAll(toAbsoluteOffset: 0, header(dataBytes: dataBytes))
        } catch {
            throw AudioError(.cannotWrite, "cannot write WAV file \(url.path): \(error.fileErrorText)")
        }
        return count
    }

    func close() { try? file.close() }

    /// A canonical 44-byte PCM header, S16_LE.
    private func header(dataBytes: Int) -> [UInt8] {
        var data: [UInt8] = []
        func append(_ text: String) { data.append(contentsOf: Array(text.utf8)) }
        func append32(_ value: Int) { withUnsafeBytes(of: UInt32(value).littleEndian) { data.append(contentsOf: $0) } }
        func append16(_ value: Int) { withUnsafeBytes(of: UInt16(value).littleEndian) { data.append(contentsOf: $0) } }
        append("RIFF")
        append32(36 + dataBytes)
        append("WAVEfmt ")
        append32(16)
        append16(1)
        append16(channels)
        append32(sampleRate)
        append32(sampleRate * channels * 2)
        append16(channels * 2)
        append16(16)
        append("data")
        append32(dataBytes)
        return data
    }
}
