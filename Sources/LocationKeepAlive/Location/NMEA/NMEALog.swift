public import FoundationEssentials

/// Decodes a whole NMEA log at once, without pacing: for tools and simulations.
public enum NMEALog {
    /// The located fixes of a log, in order, and what the decoder met.
    public static func decode(
        _ bytes: [UInt8],
        device: String? = nil
    ) -> (fixes: [Location], statistics: NMEAStatistics) {
        var decoder = NMEADecoder(bytes: bytes, device: device)
        var fixes: [Location] = []
        while let report = decoder.next() {
            if let location = report.location { fixes.append(location) }
        }
        return (fixes, decoder.statistics)
    }

    /// The located fixes of a log file.
    public static func fixes(in file: URL) throws(LocationError) -> [Location] {
        do {
            return decode(Array(try Data(contentsOf: file)), device: file.lastPathComponent).fixes
        } catch {
            throw LocationError(.replayFailed, "cannot read NMEA log \(file.path): \(error.fileErrorText)")
        }
    }
}
