import FoundationEssentials
import KeepAliveCommands
import KeepAliveCore
import KeepAliveJournal

extension Output {
    /// What the journal's writer did, as a line: each commit once it returned (so a line says
    /// what is on the disk, also to a power cut's onlooker), each storage problem with the file.
    func write(_ report: JournalWriter.Report, journal: String) {
        var object = JSONLine(["event": "journal", "time": .time(Date())])
        func problem(_ key: String, _ count: Int, _ error: JournalError) {
            object[key] = .integer(count)
            object["error"] = .string("\(error)")
        }
        switch report {
        case .systemClock(let offset):
            write(offset)
            return
        case .stored(let commit):
            object["stored"] = .integer(commit.count)
            object["first"] = .integer(Int(commit.first))
            object["last"] = .integer(Int(commit.last))
            object["firstFix"] = commit.firstFixTime.map { .time(Date(timeIntervalSince1970: $0)) } ?? .null
            object["lastFix"] = commit.lastFixTime.map { .time(Date(timeIntervalSince1970: $0)) } ?? .null
            if let offset = commit.systemClockOffset { object["clockOffset"] = .number(offset.seconds) }
            object["seconds"] = .number(commit.duration.seconds)
        case .holding(let held, let error): problem("held", held, error)
        case .dropped(let count, let error): problem("dropped", count, error)
        case .notStoredAtStop(let held, let error): problem("notStored", held, error)
        }
        if json { Console.out(object.bytes) }
        if case .stored = report {
            if !json { Console.out("# \(report)\n") }
        } else {
            Console.error("keepalive: \(report)\n")  // a problem is said in words, in JSON mode too
        }
    }

    /// The system clock found wrong (beyond the tolerance of the receiver's time), or right again.
    private func write(_ offset: SystemClockOffset) {
        let wrong = offset.isBeyondTolerance
        if json {
            Console.out(
                JSONLine([
                    "event": "clock", "time": .time(Date()), "offset": .number(offset.seconds), "wrong": .bool(wrong),
                ]).bytes
            )
        }
        if wrong {
            Console.error(
                "keepalive: the system clock is \(offset.words) the receiver's time: fixes are marked and carry the "
                    + "receiver's time until the clock is set (NTP, or chrony from gpsd)\n"
            )
        } else if !json {
            Console.out("# the system clock agrees with the receiver's time again (\(offset.words) it)\n")
        }
    }
}
