import FoundationEssentials
import Glibc
import KeepAliveCore

/// Which processes play audio on ALSA hardware now, read from the kernel: each playback
/// substream's `status` file under `/proc/asound` says `state: RUNNING` and `owner_pid`.
///
/// Plugins (`null`, PipeWire, PulseAudio streams) have no such file: for those the host takes
/// the app's own report, and says so.
struct ALSAObserver: Sendable {
    var root = "/proc/asound"

    /// Process ids owning a running playback substream.
    func playingProcesses() -> Set<Int32> {
        var owners: Set<Int32> = []
        for card in entries(root, prefix: "card") {
            for pcm in entries("\(root)/\(card)", prefix: "pcm") where pcm.hasSuffix("p") {
                for sub in entries("\(root)/\(card)/\(pcm)", prefix: "sub") {
                    guard let status = KernelFile.read("\(root)/\(card)/\(pcm)/\(sub)/status") else { continue }
                    var running = false
                    var owner: Int32?
                    for line in status.split(separator: "\n") {
                        let parts = line.split(separator: ":", maxSplits: 1).map { $0.trimmed }
                        guard parts.count == 2 else { continue }
                        if parts[0] == "state" { running = parts[1] == "RUNNING" }
                        if parts[0] == "owner_pid" { owner = Int32(parts[1]) }
                    }
                    if running, let owner { owners.insert(owner) }
                }
            }
        }
        return owners
    }

    private func entries(_ path: String, prefix: String) -> [String] {
        guard let directory = opendir(path) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name.hasPrefix(prefix) { names.append(name) }
        }
        return names.sorted()
    }
}
