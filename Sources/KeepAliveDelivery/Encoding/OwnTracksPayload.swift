import FoundationEssentials
import KeepAliveJournal
import KeepAliveCore

/// The OwnTracks `location` message of a record, in the units OwnTracks uses: `tst` and
/// `created_at` in whole seconds, `vel` in km/h, `acc`, `alt`, `vac`, `cog` and `batt` as integers.
enum OwnTracksPayload {
    static func json(_ record: JournalRecord, trackerID: String?) -> String {
        let fix = record.location
        let time = fix.timestamp ?? record.recordedAt
        var json = "{\"_type\":\"location\",\"_id\":\"\(record.id.prefix(8))\""
        json += ",\"lat\":\(fix.latitude.fixed(7)),\"lon\":\(fix.longitude.fixed(7))"
        json += ",\"tst\":\(Int64(time.timeIntervalSince1970.rounded(.down)))"
        func integer(_ key: String, _ value: Double?) {
            guard let value, value.isFinite else { return }
            json += ",\"\(key)\":\(Int64(value.rounded()))"
        }
        integer("acc", fix.horizontalAccuracy)
        integer("alt", fix.altitudeMSL ?? fix.altitudeHAE)
        integer("vac", fix.verticalAccuracy)
        integer("vel", fix.speed.map { $0 * 3.6 })
        integer("cog", fix.course)
        if let battery = record.battery { json += ",\"batt\":\(battery)" }
        if let trackerID { json += ",\"tid\":\"\(trackerID.jsonEscaped)\"" }
        json += ",\"created_at\":\(Int64(record.recordedAt.timeIntervalSince1970.rounded(.down)))}"
        return json
    }
}
