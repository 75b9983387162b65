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

    /// The located fixes of a log file, read 64 KB at a time (a stream is read to its end).
    public static func fixes(in file: URL) throws(LocationError) -> [Location] {
        let input = try NMEAInput(file: file)
        var decoder = NMEADecoder(input: input, device: file.lastPathComponent)
        var fixes: [Location] = []
        while true {
            if let report = decoder.next() {
                if let location = report.location { fixes.append(location) }
            } else if decoder.isWaitingForInput {
                input.waitUntilReadable()  // a stream with nothing yet
            } else {
                break
            }
        }
        if let reason = decoder.statistics.readError { throw LocationError(.replayFailed, reason) }
        return fixes
    }
}
