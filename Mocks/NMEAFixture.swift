public import Foundation

/// The real NMEA logs bundled with the mocks (from gpsd's regression suite, BSD-2-Clause),
/// each with what gpsd 3.22 itself decoded from it.
public struct NMEAFixture: Sendable, Hashable, CustomStringConvertible {
    /// The log's file name, such as `mt3339.log`.
    public let name: String
    /// The bundled folder it is in: `nmea` (real receivers) or `agreement` (made up).
    public let folder: String

    /// The bundled log `name` in `folder`.
    public init(_ name: String, folder: String = "nmea") {
        self.name = name
        self.folder = folder
    }

    /// Every bundled real receiver log, by name.
    public static var all: [NMEAFixture] { logs(in: "nmea") }

    /// Logs made up to probe one of gpsd's decoding rules each (few satellites, two positions in
    /// one epoch, unreadable times), with what gpsd 3.22 decoded from them.
    public static var madeUp: [NMEAFixture] { logs(in: "agreement") }

    private static func logs(in folder: String) -> [NMEAFixture] {
        let path = resources.appendingPathComponent(folder, isDirectory: true).path
        let files = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return files.filter { $0.hasSuffix(".log") }.sorted().map { NMEAFixture($0, folder: folder) }
    }

    /// A clean 1 Hz log with a fix throughout (Adafruit Ultimate GPS HAT, 30 epochs).
    public static let mt3339 = NMEAFixture("mt3339.log")

    /// The folder holding the bundled real receiver logs.
    public static var directory: URL { resources.appendingPathComponent("nmea", isDirectory: true) }

    private static var resources: URL { Bundle.module.resourceURL! }

    /// Where the log is on disk.
    public var url: URL { Self.resources.appendingPathComponent(folder, isDirectory: true).appendingPathComponent(name) }

    /// The log's bytes.
    public func bytes() throws -> [UInt8] { Array(try Data(contentsOf: url)) }

    /// gpsd 3.22's TPV reports for this log, in order (see `Fixtures/README.md`).
    public func gpsdReports() throws -> [GPSDTPV] {
        let text = try String(contentsOf: url.appendingPathExtension("gpsd-3.22.ndjson"), encoding: .utf8)
        let decoder = JSONDecoder()
        return try text.split(separator: "\n").map { try decoder.decode(GPSDTPV.self, from: Data($0.utf8)) }
    }

    /// The log's file name.
    public var description: String { name }
}

/// The fields of a gpsd TPV report that the decoders are compared on.
public struct GPSDTPV: Sendable, Hashable, Decodable {
    /// gpsd's fix mode: 0 or 1 no fix, 2 2D, 3 3D.
    public var mode: Int
    /// The fix's time, ISO 8601 as gpsd writes it.
    public var time: String?
    /// Latitude in degrees.
    public var lat: Double?
    /// Longitude in degrees.
    public var lon: Double?
    /// Altitude above mean sea level in metres (the GGA's, on a 2D fix too).
    public var altMSL: Double?
    /// Estimated horizontal error in metres.
    public var eph: Double?
    /// Speed over ground in m/s.
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
