import Foundation
@_spi(Fuzzing) @testable import KeepAliveCore
@_spi(Fuzzing) @testable import KeepAliveHost
@testable import KeepAliveHostProtocol
import Testing

/// The inputs kept from fuzzing (`scripts/fuzz`), replayed on every run: each once crashed or
/// was close to it. A new finding is added as a file under `FuzzRegressions/<target>/`.
struct FuzzRegressionTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "FuzzRegressions"
    )

    static func inputs(_ target: String) -> [String] {
        let names =
            (try? FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent(target).path)) ?? []
        return names.sorted()
    }

    static func bytes(_ target: String, _ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: folder.appendingPathComponent(target).appendingPathComponent(name)))
    }

    @Test func theCorpusIsThere() {
        #expect(Self.inputs("FuzzNMEA").count >= 3 && Self.inputs("FuzzGPSD").count >= 3)
        #expect(Self.inputs("FuzzHostProtocol").count >= 3)
    }

    @Test(arguments: inputs("FuzzNMEA"))
    func nmeaInputDecodesSafely(name: String) throws {
        var decoder = NMEADecoder(bytes: try Self.bytes("FuzzNMEA", name))
        while let report = decoder.next() {
            if let fix = report.location {
                #expect(abs(fix.latitude) <= 90 && abs(fix.longitude) <= 180, "\(name): \(fix)")
            }
        }
    }

    @Test(arguments: inputs("FuzzGPSD"))
    func gpsdInputDecodesSafely(name: String) throws {
        #expect(!GPSDFuzzing.decode(try Self.bytes("FuzzGPSD", name)), "\(name) is no usable fix")
    }
}

/// Day arithmetic without `Calendar` (a FoundationEssentials-only binary has no ICU time zones:
/// the fuzzer found `TimeZone(identifier: "UTC")` was nil there, at a midnight rollover).
struct CivilDateTests {
    @Test(arguments: [
        (1970, 1, 1, 0), (2000, 2, 29, 11_016), (2000, 3, 1, 11_017), (1999, 12, 31, 10_956),
        (2026, 11, 22, 20_779), (1969, 12, 31, -1), (2100, 3, 1, 47_541),
    ])
    func roundTrips(year: Int, month: Int, day: Int, days: Int) {
        #expect(CivilDate.days(year: year, month: month, day: day) == days)
        let back = CivilDate.date(days: days)
        #expect(back.year == year && back.month == month && back.day == day)
    }
}

/// The host's control protocol decoder on the kept inputs: a request, or a clear refusal.
struct HostProtocolFuzzRegressionTests {
    @Test(arguments: FuzzRegressionTests.inputs("FuzzHostProtocol"))
    func controlLineDecodesOrIsRefusedClearly(name: String) throws {
        let line = try FuzzRegressionTests.bytes("FuzzHostProtocol", name)
        do {
            let request = try HostProtocol.decodeRequest(line)
            #expect(try HostProtocol.decodeRequest(HostProtocol.encode(request).dropLast()) == request)
            #expect(name.hasPrefix("valid"), "\(name) should have been refused")
        } catch {
            #expect(error.code == .badRequest && error.message.contains("not a host request"))
            #expect(!name.hasPrefix("valid"), "\(name): \(error)")
        }
    }

    @Test func anOverlongLineIsRefusedBeforeDecoding() {
        let line = [UInt8](repeating: UInt8(ascii: " "), count: HostProtocol.maximumLineLength + 1)
        #expect(throws: HostError.self) { try HostProtocol.decodeRequest(line) }
    }
}
