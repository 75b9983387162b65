import Foundation
import KeepAliveCore
import LocationKeepAliveMocks
import Subprocess
import IntegrationSupport
import Testing

/// Real ALSA faults: a device that hangs in open (busy) and one that goes away mid-pulse.
/// ALSA's `file` plugin writes into a FIFO: with no reader its open blocks, and when the reader
/// dies the next write fails. Configured through an `.asoundrc` in a private `HOME`.
@Suite(.timeLimit(.minutes(3)))
struct AudioFaultTests {
    let home: URL
    let fifo: URL
    let authFile: URL

    init() async throws {
        home = FileManager.default.temporaryDirectory.appendingPathComponent("alsa-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        fifo = home.appendingPathComponent("device.fifo")
        authFile = home.appendingPathComponent("auth.json")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        try Data(
            """
            pcm.vanishing {
                type file
                slave.pcm "null"
                file "\(fifo.path)"
                format "raw"
            }

            """.utf8
        ).write(to: home.appendingPathComponent(".asoundrc"))
        _ = try await runCommand(
            try Tools.keepalive.path,
            ["auth", "set", "when-in-use", "--app", "audio", "--auth-file", authFile.path]
        )
    }

    /// `keepalive run` pulsing on the FIFO device, in the background: its pulse events.
    private func pulses(
        count: Int,
        pulse: String,
        whileRunning body: @escaping @Sendable () async throws -> Void = {}
    ) async throws -> (pulses: [[String: Any]], stopTime: Duration?, status: TerminationStatus) {
        let ((lines, stopTime), status) = try await RunningCommand.run(
            "/usr/bin/env",
            [
                "HOME=\(home.path)", try Tools.keepalive.path, "run", "--replay",
                NMEAFixture("telit-he910.log").url.path,
                "--json", "--background", "--policy", "ios13", "--budget", "1s", "--interval", "4s", "--pulse", pulse,
                "--audio-device", "vanishing", "--app", "audio", "--auth-file", authFile.path,
            ]
        ) { command in
            var lines: [String] = []
            let side = Task { try await body() }
            while lines.filter({ $0.contains(#""event":"pulse""#) }).count < count,
                let line = try await command.nextLine()
            {
                lines.append(line)
            }
            side.cancel()
            let sent = Date()
            try command.send(.terminate)
            while let line = try await command.nextLine() { lines.append(line) }
            // From the signal to the service's own stamp on its stopped event.
            let stopped = lines.last(where: isStoppedLine).flatMap(writtenAt)
            return (lines, stopped.map { Duration.seconds($0.timeIntervalSince(sent)) })
        }
        let pulses = lines.filter { $0.contains(#""event":"pulse""#) }.compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        return (pulses, stopTime, status)
    }

    @Test func aDeviceThatHangsInOpenFailsEachPulseClearlyAndTheServiceGoesOn() async throws {
        let (pulses, stopTime, status) = try await pulses(count: 2, pulse: "500ms")
        // Two read before the stop; a slow machine may start a third before the signal lands.
        #expect(pulses.count >= 2)
        for pulse in pulses {
            #expect((pulse["error"] as? String)?.contains("did not open within 2 s (busy or hung)") == true, "\(pulse)")
        }
        #expect(status == .exited(0))
        // Under the 2 s a hung open is given: the exit does not wait for it.
        let stopped = try #require(stopTime, "no stopped event")
        #expect(stopped < Tools.bound(.milliseconds(1500)), "the hung device does not hold up the exit: \(stopped)")
    }

    @Test func aDeviceThatGoesAwayMidPulseIsAnErrorNotACrash() async throws {
        // The reader is there before the service starts (its open cannot time out however late
        // the pulse comes), and goes away once the first pulse has begun.
        let reader = try FIFOReader(opening: fifo)
        let (pulses, _, status) = try await pulses(count: 1, pulse: "3s")
        #expect(reader.readByte, "the pulse never wrote to the device")
        let error = pulses.first?["error"] as? String
        #expect(error?.contains("stopped playing") == true, "\(String(describing: error))")
        #expect(status == .exited(0))
    }
}

/// The read end of a FIFO, opened at once (so a writer's open does not block), and closed by a
/// thread of its own as soon as the first byte has been read: the writer's next write finds no
/// reader. A thread rather than a task, so that a busy concurrency pool cannot delay it.
private final class FIFOReader: Sendable {
    private let done = Locked(false)  // not Mutex: ThreadSanitizer does not see its futex

    /// Whether a byte was read before the reader closed.
    var readByte: Bool { done.withLock { $0 } }

    init(opening fifo: URL) throws {
        let fd = open(fifo.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)  // no child of another test keeps it open
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        Thread.detachNewThread { [self] in
            var pollFD = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            var byte: UInt8 = 0
            // Until a writer has come, the FIFO reads empty (0 bytes) rather than blocking.
            for _ in 0..<60_000 {
                if poll(&pollFD, 1, 10) > 0, read(fd, &byte, 1) == 1 {
                    self.done.withLock { $0 = true }
                    break
                }
                usleep(1_000)
            }
            close(fd)
        }
    }
}
