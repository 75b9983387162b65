/// The gpsd-message decoding this library owns (libgps decodes the rest), reachable for the
/// fuzz targets in `Fuzz/` and nothing else: `@_spi(Fuzzing) import LocationKeepAlive`.
@_spi(Fuzzing)
public enum GPSDFuzzing {
    /// Classifies one line and, for a POLL, decodes its fix; returns whether a fix came out.
    public static func decode(_ line: [UInt8]) -> Bool {
        switch GPSDMessageClass(message: line) {
        case .poll: GPSDPollReply.report(from: line, satellitesUsed: nil) != nil
        default: false
        }
    }
}
