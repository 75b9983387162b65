import FoundationEssentials
import Glibc
import ReceiverSimulation

/// The simulator's loop on one thread: what gpsd writes is read as it comes, the supply's
/// commands likewise, and each second's NMEA written at the second; each new entry of the
/// receiver's power log appended to the log file at once.
struct ReceiverRunner {
    var receiver: SimulatedReceiver
    let terminal: PseudoTerminal
    let powerLog: String?
    let commands: String?
    private var logged = 0

    init(receiver: SimulatedReceiver, terminal: PseudoTerminal, powerLog: String?, commands: String?) {
        self.receiver = receiver
        self.terminal = terminal
        self.powerLog = powerLog
        self.commands = commands
    }

    /// The time since boot, the device's sleep included.
    static func bootTime() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_BOOTTIME, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    mutating func run() {
        // O_RDWR: the FIFO never reports an end when its writers come and go.
        let fifo = commands.map { open($0, O_RDWR | O_NONBLOCK | O_CLOEXEC) } ?? -1
        var pendingCommand: [UInt8] = []
        var nextSecond = (Date().timeIntervalSince1970).rounded(.down) + 1
        while true {
            let wait = max(0, nextSecond - Date().timeIntervalSince1970)
            var fds = [pollfd(fd: terminal.master, events: Int16(POLLIN), revents: 0), pollfd(fd: fifo, events: Int16(POLLIN), revents: 0)]
            _ = poll(&fds, fifo >= 0 ? 2 : 1, Int32(wait * 1_000) + 1)
            if fds[0].revents & Int16(POLLIN) != 0 {
                let answer = receiver.take(terminal.read(), at: Self.bootTime())
                if !answer.isEmpty { terminal.write(answer) }
            }
            if fifo >= 0, fds[1].revents & Int16(POLLIN) != 0 {
                var buffer = [UInt8](repeating: 0, count: 256)
                let count = buffer.withUnsafeMutableBytes { read(fifo, $0.baseAddress, $0.count) }
                if count > 0 { pendingCommand += buffer[..<count] }
                while let end = pendingCommand.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pendingCommand[..<end], as: UTF8.self).filter { !$0.isWhitespace }
                    pendingCommand.removeFirst(end + 1)
                    if line == "on" || line == "off" { receiver.command(line == "on", at: Self.bootTime()) }
                }
            }
            let now = Date().timeIntervalSince1970
            if now >= nextSecond {
                let sentences = receiver.sentences(at: Self.bootTime(), date: Date(timeIntervalSince1970: nextSecond))
                terminal.write(Array(sentences.joined().utf8))
                // A second missed (the device asleep) is skipped, not caught up.
                nextSecond = max(nextSecond + 1, now.rounded(.down) + 1)
            }
            writeLog()
        }
    }

    private mutating func writeLog() {
        guard let powerLog, receiver.log.count > logged else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        var text = ""
        for entry in receiver.log[logged...] {
            if let data = try? encoder.encode(entry) { text += String(decoding: data, as: UTF8.self) + "\n" }
        }
        logged = receiver.log.count
        let file = open(powerLog, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard file >= 0 else { return }
        _ = Array(text.utf8).withUnsafeBytes { write(file, $0.baseAddress, $0.count) }
        close(file)
    }
}
