public import Foundation
import LocationKeepAlive

/// The real NMEA logs bundled with the mocks (from gpsd's regression suite, BSD-2-Clause),
/// each with what gpsd 3.22 itself decoded from it.
public struct NMEAFixture: Sendable, Hashable, CustomStringConvertible {
    /// The log's file name, such as `mt3339.log`.
    public let name: String

    public init(_ name: String) { self.name = name }

    /// Every bundled log, by name.
    public static var all: [NMEAFixture] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return files.filter { $0.hasSuffix(".log") }.sorted().map(NMEAFixture.init)
    }

    /// A clean 1 Hz log with a fix throughout (Adafruit Ultimate GPS HAT, 30 epochs).
    public static let mt3339 = NMEAFixture("mt3339.log")

    /// The folder holding the bundled logs.
    public static var directory: URL {
        Bundle.module.resourceURL!.appendingPathComponent("nmea", isDirectory: true)
    }

    /// Where the log is on disk.
    public var url: URL { Self.directory.appendingPathComponent(name) }

    /// The log's bytes.
    public func bytes() throws -> [UInt8] { Array(try Data(contentsOf: url)) }

    /// gpsd 3.22's TPV reports for this log, in order (see `Fixtures/README.md`).
    public func gpsdReports() throws -> [GPSDTPV] {
        let text = try String(contentsOf: url.appendingPathExtension("gpsd-3.22.ndjson"), encoding: .utf8)
        let decoder = JSONDecoder()
        return try text.split(separator: "\n").map { try decoder.decode(GPSDTPV.self, from: Data($0.utf8)) }
    }

    public var description: String { name }
}

/// The fields of a gpsd TPV report that the decoders are compared on.
public struct GPSDTPV: Sendable, Hashable, Decodable {
    public var mode: Int
    public var time: String?
    public var lat: Double?
    public var lon: Double?
    public var eph: Double?
    public var speed: Double?

    /// The time of day of ``time`` in milliseconds (gpsd shifts old dates by 1024 weeks).
    public var millisecondsOfDay: Int? {
        guard let time, time.count >= 23 else { return nil }
        let clock = time.split(separator: "T").last.map(String.init) ?? ""
        let parts = clock.dropLast().split(separator: ":")
        guard parts.count == 3, let h = Int(parts[0]), let m = Int(parts[1]), let s = Double(parts[2]) else {
            return nil
        }
        return (h * 3600 + m * 60) * 1000 + Int((s * 1000).rounded())
    }
}
