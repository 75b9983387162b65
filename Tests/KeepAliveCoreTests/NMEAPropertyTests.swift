import KeepAliveCore
import LocationKeepAliveMocks
import Testing

/// Random damage to real sentences: the decoder never traps, counts what it skips, and never
/// reports a position out of range or from a sentence whose checksum failed. Seeded, so a
/// failure names the seed that reproduces it.
struct NMEAPropertyTests {
    /// Every checksummed sentence of the bundled logs, without its line end.
    static let sentences: [[UInt8]] = {
        var all: [[UInt8]] = []
        for fixture in NMEAFixture.all {
            guard let bytes = try? fixture.bytes() else { continue }
            for line in bytes.split(separator: UInt8(ascii: "\n")) {
                var sentence = Array(line)
                if sentence.last == UInt8(ascii: "\r") { sentence.removeLast() }
                // One sentence per line only: some logs glue two together, a case of its own.
                if sentence.first == UInt8(ascii: "$"), sentence.count > 6,
                    sentence[sentence.count - 3] == UInt8(ascii: "*"),
                    sentence.filter({ $0 == UInt8(ascii: "$") || $0 == UInt8(ascii: "*") }).count == 2
                {
                    all.append(sentence)
                }
            }
        }
        return all
    }()

    static func checksum(_ body: ArraySlice<UInt8>) -> [UInt8] {
        let value = body.reduce(UInt8(0), ^)
        let hex = Array("0123456789ABCDEF".utf8)
        return [hex[Int(value >> 4)], hex[Int(value & 0xF)]]
    }

    /// Decodes everything; checks what must hold for any input.
    static func decode(_ bytes: [UInt8], seed: UInt64) -> NMEAStatistics {
        var decoder = NMEADecoder(bytes: bytes)
        while let report = decoder.next() {
            if let fix = report.location {
                #expect(fix.latitude.isFinite && abs(fix.latitude) <= 90, "seed \(seed)")
                #expect(fix.longitude.isFinite && abs(fix.longitude) <= 180, "seed \(seed)")
                #expect(fix.horizontalAccuracy.map { $0.isFinite && $0 >= 0 } ?? true, "seed \(seed)")
            }
        }
        return decoder.statistics
    }

    @Test func aFlippedBodyByteIsABadChecksumAndNothingElse() {
        var random = SeededGenerator(state: 1)
        for round in 0..<5_000 {
            var sentence = Self.sentences.randomElement(using: &random)!
            let index = Int.random(in: 1..<(sentence.count - 3), using: &random)
            let flip = UInt8.random(in: 1...0x7F, using: &random)
            sentence[index] ^= flip
            guard sentence[index] != UInt8(ascii: "*"), sentence[index] != UInt8(ascii: "$"), sentence[index] >= 0x20,
                sentence[index] != 0x7F, sentence[index] < 0x80
            else { continue }  // a new delimiter or a control byte is a different sentence shape
            let statistics = Self.decode(sentence + [13, 10], seed: UInt64(round))
            #expect(
                statistics.badChecksums == 1 && statistics.sentences == 0,
                "round \(round): \(String(decoding: sentence, as: UTF8.self)): \(statistics)"
            )
        }
    }

    @Test func truncationNeverTrapsAndNeverPassesAsValid() {
        var random = SeededGenerator(state: 2)
        for round in 0..<5_000 {
            let sentence = Self.sentences.randomElement(using: &random)!
            let cut = Int.random(in: 0..<(sentence.count - 2), using: &random)  // loses at least the last checksum digit
            let statistics = Self.decode(Array(sentence[..<cut]) + [13, 10], seed: UInt64(round))
            #expect(
                statistics.sentences == 0 && statistics.reports == 0,
                "round \(round): \(String(decoding: sentence[..<cut], as: UTF8.self)): \(statistics)"
            )
        }
    }

    @Test func overlongFieldsWithAValidChecksumAreSkippedOrReadSanely() {
        var random = SeededGenerator(state: 3)
        for round in 0..<2_000 {
            let sentence = Self.sentences.randomElement(using: &random)!
            var body = Array(sentence[1..<(sentence.count - 3)])
            let commas = body.indices.filter { body[$0] == UInt8(ascii: ",") }
            guard let at = commas.randomElement(using: &random) else { continue }
            let length = Int.random(in: 100...20_000, using: &random)
            let filler = UInt8(ascii: Bool.random(using: &random) ? "9" : "A")
            body.insert(contentsOf: [UInt8](repeating: filler, count: length), at: at + 1)
            let damaged = [UInt8(ascii: "$")] + body + [UInt8(ascii: "*")] + Self.checksum(body[...]) + [13, 10]
            _ = Self.decode(damaged + sentence + [13, 10], seed: UInt64(round))
        }
    }

    @Test func wrongChecksumsAreCountedAndSkipped() {
        var random = SeededGenerator(state: 4)
        for round in 0..<5_000 {
            var sentence = Self.sentences.randomElement(using: &random)!
            let right = Array(sentence.suffix(2))
            var wrong = right
            while wrong == right || wrong.map({ $0 | 0x20 }) == right.map({ $0 | 0x20 }) {
                wrong = [
                    Array("0123456789ABCDEF".utf8).randomElement(using: &random)!,
                    Array("0123456789ABCDEF".utf8).randomElement(using: &random)!,
                ]
            }
            sentence.replaceSubrange((sentence.count - 2)..., with: wrong)
            let statistics = Self.decode(sentence + [13, 10], seed: UInt64(round))
            #expect(statistics.badChecksums == 1 && statistics.sentences == 0, "round \(round): \(statistics)")
        }
    }

    @Test func randomBytesAndSplicedLogsNeverTrap() throws {
        var random = SeededGenerator(state: 5)
        let log = try NMEAFixture.mt3339.bytes()
        for round in 0..<300 {
            var bytes = log
            for _ in 0..<Int.random(in: 1...200, using: &random) {
                let index = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<4, using: &random) {
                case 0: bytes[index] = UInt8.random(in: 0...255, using: &random)
                case 1: bytes.remove(at: index)
                case 2:
                    bytes.insert(
                        contentsOf: (0..<Int.random(in: 1...64, using: &random)).map { _ in
                            UInt8.random(in: 0...255, using: &random)
                        },
                        at: index
                    )
                default: bytes.insert(contentsOf: Self.sentences.randomElement(using: &random)!, at: index)
                }
            }
            let statistics = Self.decode(bytes, seed: UInt64(round))
            #expect(statistics.sentences > 0, "round \(round): most of the log is still readable")
        }
    }
}
