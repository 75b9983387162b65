import FoundationEssentials
import KeepAliveDelivery
import KeepAliveJournal
import KeepAliveCommands
import KeepAliveCore

extension Output {
    /// A delivery event as a JSON object's fields and a line of text.
    static func describe(_ event: DeliveryEvent, into object: JSONLine) -> (JSONLine, String) {
        var object = object
        object["event"] = "delivery"
        let text: String
        switch event {
        case .delivered(let destination, let count, let through):
            object["destination"] = .string(destination)
            object["delivered"] = .integer(count)
            object["through"] = .integer(Int(through))
            text = "delivered \(count) to \(destination) (through #\(through))"
        case .deliveredBeforeStored(let destination, let count):
            object["destination"] = .string(destination)
            object["delivered"] = .integer(count)
            object["journaled"] = false
            text = "delivered \(count) to \(destination) (before their commit: journaled with it)"
        case .failed(let destination, let reason, let retryIn):
            object["destination"] = .string(destination)
            object["error"] = .string(reason)
            object["retryIn"] = .number(retryIn.seconds)
            text = "delivery to \(destination) failed: \(reason); retry in \(retryIn.secondsText)"
        case .deadLettered(let destination, let sequence, let reason):
            object["destination"] = .string(destination)
            object["deadLetter"] = .integer(Int(sequence))
            object["error"] = .string(reason)
            text = "fix #\(sequence) went to \(destination)'s dead letters: \(reason) (keepalive journal retry \(destination))"
        case .waitingForLease(let destination, let holder):
            object["destination"] = .string(destination)
            object["waiting"] = true
            if let holder { object["holder"] = .string(holder.owner) }
            text = "another process delivers \(destination)\(holder.map { ": \($0)" } ?? ""); waiting for its lease"
        case .tookOver(let destination):
            object["destination"] = .string(destination)
            object["delivering"] = true
            text = "delivering \(destination)"
        case .journalError(let destination, let error):
            object["destination"] = .string(destination)
            object["error"] = .string("\(error)")
            text = "delivery to \(destination): \(error)"
        }
        return (object, text)
    }

    /// A delivery event as a line (for `keepalive upload`).
    func write(_ event: DeliveryEvent) {
        let now = Date()
        let (object, text) = Self.describe(event, into: JSONLine(["time": .time(now)]))
        if json {
            Console.out(object.bytes)
        } else {
            Console.out("[\(ISO8601Text.string(now))] \(text)\n")
        }
    }

    /// What a stop (or a pause before the host freezes the service) left undelivered, after it
    /// sent what it could within `bound` for `took`: each destination's fixes still waiting.
    func writeUndelivered(_ left: [(name: String, count: Int)], took: Duration, bound: Duration, pausing: Bool) {
        let moment = pausing ? "before the freeze" : "stopping"
        if json {
            for destination in left {
                Console.out(
                    JSONLine([
                        "time": .time(Date()), "event": "delivery", pausing ? "pausing" : "stopping": true,
                        "destination": .string(destination.name), "undelivered": .integer(destination.count),
                        "seconds": .number(took.seconds),
                    ]).bytes
                )
            }
        }
        let waiting = left.filter { $0.count > 0 }
        guard !waiting.isEmpty else {
            if !json { Console.out("# \(moment): every fix delivered (in \(took.secondsText))\n") }
            return
        }
        let list = waiting.map { "\($0.count) to \($0.name)" }.joined(separator: ", ")
        let later = pausing ? "sent once it runs again, or by keepalive upload" : "sent at the next start, or by keepalive upload"
        Console.error("keepalive: \(moment): fixes undelivered after \(bound.secondsText): \(list); journaled, \(later)\n")
    }
}
