import Foundation
import TestWaiting

/// `gnss-receiver` (a simulated u-blox M8 on a pseudo-terminal) and a real gpsd that opens it
/// as its device, on a free port, both killed when this goes. The receiver's power log is read
/// back as its entries.
package final class SimulatedReceiverUnderGPSD {
    package let directory: String
    package let port: Int
    package let device: String
    package let commands: String
    private let receiver: ChildProcess
    private let gpsd: ChildProcess

    /// One entry of the receiver's power log.
    package struct Entry: Decodable, Sendable, Equatable {
        package var at: Double
        package var event: String
        package var start: String?
        package var timeToFix: Double?
        package var cause: String?
    }

    /// Starts both and waits until gpsd has identified the receiver as a u-blox, or, with
    /// `opensForItsFirstWatcher`, only until gpsd listens: gpsd started as Debian starts it
    /// (without `-n`) opens the device, and identifies it, for its first watcher.
    ///
    /// - Parameter receiverArguments: more of `gnss-receiver`'s options (`--first hot` is given first).
    package init(receiverArguments: [String] = [], opensForItsFirstWatcher: Bool = false) async throws {
        try Tools.requireGPSD()
        directory = NSTemporaryDirectory() + "receiver-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        device = directory + "/gnss"
        commands = directory + "/commands"
        guard mkfifo(commands, 0o600) == 0 else { throw ToolMissing("cannot make the FIFO \(commands)") }
        receiver = try ChildProcess(
            try Tools.built("gnss-receiver").path,
            ["--link", device, "--power-log", directory + "/power.log", "--commands", commands, "--first", "hot"] + receiverArguments,
            output: directory + "/receiver.out"
        )
        try await eventually("gnss-receiver to make its terminal", context: { [receiver] in receiver.output }) { [device] in
            FileManager.default.fileExists(atPath: device)
        }
        port = try await Tools.freePort()
        gpsd = try ChildProcess(
            "/usr/sbin/gpsd", ["-N", "-D", "3", "-S", "\(port)"] + (opensForItsFirstWatcher ? [] : ["-n"]) + [device], output: directory + "/gpsd.log"
        )
        let awaited = opensForItsFirstWatcher ? "stashing device" : "identified as type u-blox"
        try await eventually("gpsd's log to say \(awaited)", context: { [gpsd] in gpsd.output }) { [gpsd] in gpsd.output.contains(awaited) }
    }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// The receiver's power log so far.
    package var log: [Entry] {
        let text = (try? String(contentsOfFile: directory + "/power.log", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { try? JSONDecoder().decode(Entry.self, from: Data($0.utf8)) }
    }

    /// Its events in order, as `event:cause` (`backup:UBX-RXM-PMREQ`, `on:input`).
    package var events: [String] { log.map { "\($0.event)" + ($0.cause.map { ":\($0)" } ?? "") } }

    /// gpsd's log, for a failure's message.
    package var gpsdLog: String { gpsd.output.split(separator: "\n").suffix(30).joined(separator: "\n") }
}
