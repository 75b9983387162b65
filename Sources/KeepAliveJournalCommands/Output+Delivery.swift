import FoundationEssentials
import KeepAliveDelivery
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
        case .waitingForLease(let destination):
            object["destination"] = .string(destination)
            object["waiting"] = true
            text = "another process delivers \(destination); waiting"
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
}
