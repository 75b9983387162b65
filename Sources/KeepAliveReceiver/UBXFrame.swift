public import KeepAliveCore

/// One UBX message, u-blox's binary protocol: `B5 62`, class, id, a little-endian length, the
/// payload and an 8-bit Fletcher checksum over class to payload.
public struct UBXFrame: Sendable, Hashable, CustomStringConvertible {
    /// The message's class (`0x02` RXM, `0x05` ACK, `0x06` CFG, `0x0A` MON).
    public var messageClass: UInt8
    /// The message's id within its class.
    public var id: UInt8
    /// Its payload.
    public var payload: [UInt8]

    /// A message of `messageClass` and `id` carrying `payload`.
    public init(_ messageClass: UInt8, _ id: UInt8, _ payload: [UInt8] = []) {
        self.messageClass = messageClass
        self.id = id
        self.payload = payload
    }

    /// The bytes on the wire.
    public var bytes: [UInt8] {
        let body = [messageClass, id, UInt8(payload.count & 0xFF), UInt8(payload.count >> 8)] + payload
        return [0xB5, 0x62] + body + Self.checksum(body)
    }

    /// The bytes on the wire in hexadecimal, as gpsd's `?DEVICE` takes them (`hexdata`).
    public var hex: String { Self.hex(bytes) }

    /// Bytes in lower-case hexadecimal.
    public static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0xF)]] })
    }

    /// The checksum of `body` (class to the payload's end): CK_A and CK_B.
    public static func checksum(_ body: [UInt8]) -> [UInt8] {
        var (a, b): (UInt8, UInt8) = (0, 0)
        for byte in body {
            a &+= byte
            b &+= a
        }
        return [a, b]
    }

    /// `UBX 0x06 0x04 (4 bytes)`.
    public var description: String {
        "UBX 0x\(Self.hex([messageClass])) 0x\(Self.hex([id])) (\(payload.count) bytes)"
    }
}

/// The UBX messages the power control writes and the simulator answers.
extension UBXFrame {
    /// UBX-RXM-PMREQ: into backup mode with no end (duration 0), woken by activity on the
    /// receiver's input (its UART's RX, as every u-blox wakes from backup).
    public static let backup = UBXFrame(0x02, 0x41, [0, 0, 0, 0, 0x02, 0, 0, 0])

    /// What wakes a u-blox from backup: bytes on its input. The first are lost while it wakes
    /// (u-blox's integration manuals), so these are `0xFF` filler that no parser takes for a
    /// message.
    public static let wakeUp = [UInt8](repeating: 0xFF, count: 8)

    /// UBX-MON-VER, polled: the receiver answers with its versions (how gpsd identifies it).
    public static let pollVersion = UBXFrame(0x0A, 0x04)

    /// UBX-CFG-RST: a controlled software reset of the GNSS only, clearing what a `kind` start
    /// lacks (hot: nothing; warm: the ephemeris; cold: everything kept).
    public static func reset(_ kind: ReceiverStartKind) -> UBXFrame {
        let mask: UInt16 = switch kind {
        case .hot: 0x0000
        case .warm: 0x0001
        case .cold: 0xFFFF
        }
        return UBXFrame(0x06, 0x04, [UInt8(mask & 0xFF), UInt8(mask >> 8), 0x02, 0])
    }

    /// UBX-ACK-ACK for `frame`.
    public static func acknowledge(_ frame: UBXFrame) -> UBXFrame { UBXFrame(0x05, 0x01, [frame.messageClass, frame.id]) }
}

/// Reads UBX messages out of a byte stream that mixes them with NMEA and noise: each
/// ``take(_:)`` returns the complete messages its bytes end; what is not a message with a
/// good checksum is passed over.
public struct UBXScanner: Sendable {
    private var buffer: [UInt8] = []
    /// Bytes passed over (not part of a message with a good checksum).
    public private(set) var skipped = 0
    /// The longest payload taken: a longer length is noise, not a message.
    public static let maximumPayload = 1_024

    /// A scanner with nothing read.
    public init() {}

    /// Adds `bytes`; returns the messages now complete, in order.
    public mutating func take(_ bytes: some Sequence<UInt8>) -> [UBXFrame] {
        buffer.append(contentsOf: bytes)
        var frames: [UBXFrame] = []
        var start = 0
        while true {
            guard let sync = firstSync(from: start) else {
                // Keep a last 0xB5: it may begin a message.
                let keep = buffer.last == 0xB5 ? buffer.count - 1 : buffer.count
                skipped += keep - start
                start = keep
                break
            }
            skipped += sync - start
            guard buffer.count - sync >= 6 else { start = sync; break }
            let length = Int(buffer[sync + 4]) | Int(buffer[sync + 5]) << 8
            guard length <= Self.maximumPayload else { skipped += 2; start = sync + 2; continue }
            guard buffer.count - sync >= 8 + length else { start = sync; break }
            let body = Array(buffer[(sync + 2)..<(sync + 6 + length)])
            if Array(buffer[(sync + 6 + length)..<(sync + 8 + length)]) == UBXFrame.checksum(body) {
                frames.append(UBXFrame(body[0], body[1], Array(body[4...])))
                start = sync + 8 + length
            } else {
                skipped += 2
                start = sync + 2
            }
        }
        buffer.removeFirst(start)
        return frames
    }

    private func firstSync(from start: Int) -> Int? {
        var index = start
        while index + 1 < buffer.count {
            if buffer[index] == 0xB5, buffer[index + 1] == 0x62 { return index }
            index += 1
        }
        return nil
    }
}
