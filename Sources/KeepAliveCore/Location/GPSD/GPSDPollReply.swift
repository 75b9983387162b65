import FoundationEssentials

/// gpsd's answer to `?POLL;`: the last fix of each device, right away, so a one-shot on a new
/// connection does not wait for the receiver's next cycle.
///
/// libgps 3.22 does not decode a POLL into its `fix` (PLATFORM-NOTES), so this decodes the raw
/// JSON. A fix is used only when gpsd took it at most ``freshness`` before the POLL's own time
/// (gpsd's clock): a receiver that went quiet leaves an old fix in gpsd, and an old fix must
/// never be delivered as new.
struct GPSDPollReply: Decodable {
    /// The newest a polled fix must be, against gpsd's clock.
    static let freshness: Double = 2

    var time: String?
    var active: Int?
    var tpv: [TPV]?

    struct TPV: Decodable {
        var device: String?
        var mode: Int?
        var time: String?
        var lat: Double?
        var lon: Double?
        var altHAE: Double?
        var altMSL: Double?
        var eph: Double?
        var epv: Double?
        var speed: Double?
        var track: Double?
        var status: Int?
    }

    /// The freshest fix with a position, or `nil` (malformed JSON, no device, no fix, or too old).
    static func report(from json: some Collection<UInt8>, satellitesUsed: Int?) -> FixReport? {
        guard let reply = try? JSONDecoder().decode(GPSDPollReply.self, from: Data(json)),
            let polledAt = reply.time.flatMap(parseTime)
        else { return nil }
        let reports = (reply.tpv ?? []).compactMap { tpv -> FixReport? in
            guard let mode = tpv.mode.flatMap(FixMode.init(rawValue:)), mode.hasPosition,
                let lat = tpv.lat, let lon = tpv.lon, lat.isFinite, lon.isFinite,
                abs(lat) <= 90, abs(lon) <= 180,
                let time = tpv.time.flatMap(parseTime),
                polledAt.timeIntervalSince(time) <= freshness
            else { return nil }
            let location = Location(
                latitude: lat,
                longitude: lon,
                altitudeHAE: tpv.altHAE,
                altitudeMSL: tpv.altMSL,
                horizontalAccuracy: tpv.eph,
                verticalAccuracy: tpv.epv,
                speed: tpv.speed,
                course: tpv.track,
                timestamp: time,
                mode: mode,
                quality: tpv.status.flatMap(FixQuality.init(rawValue:)) ?? .gps,
                satellitesUsed: satellitesUsed,
                device: tpv.device
            )
            return FixReport(mode: mode, time: time, location: location)
        }
        return reports.max { ($0.time ?? .distantPast) < ($1.time ?? .distantPast) }
    }

    /// `2026-11-22T06:20:31.000Z`, as gpsd writes times.
    private static func parseTime(_ text: String) -> Date? {
        (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text))
            ?? (try? Date.ISO8601FormatStyle().parse(text))
    }
}
