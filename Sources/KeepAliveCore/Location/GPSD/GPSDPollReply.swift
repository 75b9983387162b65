import FoundationEssentials

/// gpsd's answer to `?POLL;`: the last fix of each device, right away, so a one-shot on a new
/// connection does not wait for the receiver's next cycle.
///
/// libgps 3.22 does not decode a POLL into its `fix` (PLATFORM-NOTES), so this decodes the raw
/// JSON. A receiver that went quiet leaves an old fix in gpsd, and an old fix must never be
/// delivered as new: a polled fix is used only when it is current by the age rule
/// (``isCurrent(fixTime:gpsdAge:receiverNow:)``).
struct GPSDPollReply: Decodable {
    /// The oldest a polled fix may be and still count as current: one cycle of a 1 Hz receiver,
    /// and a second more for gpsd's own delays.
    static let freshness: Double = 2
    /// How far gpsd's clock must be from a fix's time to tell nothing of its age: a day. Clocks
    /// that far apart are not a receiver gone quiet but two clocks that disagree: an old log fed
    /// by `gpsfake`, a board's clock never set, a receiver whose GPS week rolled over.
    static let clocksDisagree: Double = 86_400

    /// Whether a polled fix is gpsd's current one: at most ``freshness`` old on the receiver's
    /// clock, as every fix is aged (``LocationSource/currentDate``).
    ///
    /// `receiverNow` is that clock's reading when the source knows it (a fix seen before). Before
    /// that, the POLL is the first word of the receiver's time, and only gpsd's own clock can
    /// tell how long ago gpsd got the fix (`gpsdAge`, the POLL's time less the fix's): a fix up to
    /// ``freshness`` old on it (or ahead of it: gpsd's clock behind) is current, one older is a
    /// receiver gone quiet; but a fix more than ``clocksDisagree`` from gpsd's clock is of a clock
    /// gpsd's cannot judge, and is taken as current, as the next report from the receiver would be.
    static func isCurrent(fixTime: Date, gpsdAge: Double, receiverNow: Date?) -> Bool {
        if let receiverNow { return receiverNow.timeIntervalSince(fixTime) <= freshness }
        return gpsdAge <= freshness || gpsdAge > clocksDisagree
    }

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

    /// The freshest fix with a position and a time, and how old gpsd's clock says it is (the
    /// POLL's time less the fix's); `nil` for malformed JSON, no device, or no such fix.
    static func report(from json: some Collection<UInt8>, satellitesUsed: Int?) -> (report: FixReport, gpsdAge: Double)? {
        guard let reply = try? JSONDecoder().decode(GPSDPollReply.self, from: Data(json)),
            let polledAt = reply.time.flatMap(parseTime)
        else { return nil }
        let reports = (reply.tpv ?? []).compactMap { tpv -> FixReport? in
            guard let mode = tpv.mode.flatMap(FixMode.init(rawValue:)), mode.hasPosition,
                let lat = tpv.lat, let lon = tpv.lon, lat.isFinite, lon.isFinite,
                abs(lat) <= 90, abs(lon) <= 180,
                let time = tpv.time.flatMap(parseTime)
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
        guard let newest = reports.max(by: { ($0.time ?? .distantPast) < ($1.time ?? .distantPast) }), let time = newest.time
        else { return nil }
        return (newest, polledAt.timeIntervalSince(time))
    }

    /// `2026-11-22T06:20:31.000Z`, as gpsd writes times.
    private static func parseTime(_ text: String) -> Date? {
        (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text))
            ?? (try? Date.ISO8601FormatStyle().parse(text))
    }
}
