import ArgumentParser
import FoundationEssentials
import KeepAliveCommands
import KeepAliveDelivery
import KeepAliveJournal

extension KeepAlive.JournalCommand.JournalOptions {
    /// One JSON document on standard output, keys sorted, times in ISO 8601.
    static func printJSON(_ value: some Encodable) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        Console.out(Array(try encoder.encode(value)) + [10])
    }

    /// The journal; ``FixJournal/Access/readOnly`` for a command that only reads, which then
    /// changes nothing in the file.
    func open(_ access: FixJournal.Access) throws -> FixJournal {
        do {
            return try FixJournal(file: journal.map { URL(fileURLWithPath: $0) } ?? FixJournal.defaultFile, access: access)
        } catch {
            Output(json: json).write(error: error)
            throw ExitCode(1)
        }
    }
}

extension KeepAlive.JournalCommand.Status: JournalBacked {
    func perform() throws {
        let file = options.journal.map { URL(fileURLWithPath: $0) } ?? FixJournal.defaultFile
        guard FileManager.default.fileExists(atPath: file.path) else {
            // Nothing recorded yet: said so, and the file is not created by looking.
            if options.json {
                Console.out(JSONLine(["path": .string(file.path), "records": .integer(0), "exists": .bool(false)]).bytes)
            } else {
                Console.out("journal \(file.path)\n  0 fixes: not created yet (keepalive run --journal creates it)\n")
            }
            return
        }
        let status = try options.open(.readOnly).status()
        if options.json {
            try KeepAlive.JournalCommand.JournalOptions.printJSON(status)
            return
        }
        var text = "journal \(status.file.path)\n"
        text += "  \(status.records) fixes, \(status.bytes / 1024) KiB, last #\(status.lastSequence)\n"
        text += "  oldest \(status.oldestFix.map(ISO8601Text.string) ?? "-"), newest \(status.newestFix.map(ISO8601Text.string) ?? "-")\n"
        if let offset = status.systemClockOffset {
            text += "  system clock \(offset.words) the receiver's time at the newest fix"
            text += offset.isBeyondTolerance ? ": wrong, its fixes carry the receiver's time\n" : "\n"
        }
        if status.dropped > 0 {
            text += "  retention dropped \(status.dropped) (\(status.droppedUndelivered) not delivered everywhere)\n"
        }
        for destination in status.destinations {
            text += "\(destination.name): \(Destination.redacted(destination.settings))\n"
            text += "  depth \(destination.depth), delivered through #\(destination.deliveredThrough)"
            if let age = destination.oldestUndeliveredAge { text += ", oldest waiting \(Int(age)) s" }
            text += ", dead letters \(destination.deadLetters)\n"
            text += "  last success \(destination.lastSuccess.map(ISO8601Text.string) ?? "never")"
            if let error = destination.lastError {
                text += ", last error \(destination.lastErrorAt.map(ISO8601Text.string) ?? ""): \(error)"
            }
            text += "\n"
            if let owner = destination.deliveredBy {
                text += "  delivered by \(owner)\(destination.deliveredSince.map { " since \(ISO8601Text.string($0))" } ?? "")\n"
            }
        }
        Console.out(text)
    }
}

extension KeepAlive.JournalCommand.DeadLetters: JournalBacked {
    func perform() throws {
        let letters = try options.open(.readOnly).deadLetters(for: destination)
        if options.json {
            try KeepAlive.JournalCommand.JournalOptions.printJSON(letters)
            return
        }
        if letters.isEmpty { Console.out("no dead letters\n") }
        for letter in letters {
            Console.out(
                "\(letter.destination) #\(letter.sequence): \(letter.reason) (\(letter.tries) tries, \(ISO8601Text.string(letter.at)))"
                    + (letter.isQueuedForRetry ? ", queued for retry" : "") + "\n"
            )
        }
    }
}

extension KeepAlive.JournalCommand.Retry: JournalBacked {
    func perform() throws {
        let journal = try options.open(.readWrite)
        do {
            let count = try journal.retryDeadLetters(for: destination)
            Console.out("\(count) dead letters of \(destination) queued for retry\n")
        } catch {
            Output(json: options.json).write(error: error)
            throw ExitCode(1)
        }
    }
}
