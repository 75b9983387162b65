import FoundationEssentials
import KeepAliveCore
import KeepAliveJournal
import KeepAliveMonitoring

/// What a journal record becomes for OwnTracks, in the units OwnTracks uses (`tst` and
/// `created_at` in whole seconds, `vel` in km/h, `acc`, `alt`, `vac`, `cog` and `batt` as
/// integers): a fix a `location` on the base topic, a region's event a `transition` on
/// `TOPIC/event`; other events (significant changes, visits, a first "outside") nothing, their
/// fixes being locations of their own.
struct OwnTracksPayload: Equatable {
    /// Added to the base topic: empty, or `/event`.
    var subtopic: String
    /// The message, as JSON.
    var json: String

    /// The message as sent: ``json``, or sealed with `encryption` when there is one.
    func text(encryptedWith encryption: OwnTracksEncryption?) throws(OwnTracksError) -> String {
        guard let encryption else { return json }
        return try encryption.seal(json)
    }

    /// The message of `record`, or `nil` for an event OwnTracks has no message for.
    static func of(_ record: JournalRecord, trackerID: String?) -> OwnTracksPayload? {
        guard let event = record.event else {
            return OwnTracksPayload(subtopic: "", json: encode(location(record, trackerID: trackerID)))
        }
        guard let transition = transition(event, record: record, trackerID: trackerID) else { return nil }
        return OwnTracksPayload(subtopic: "/event", json: encode(transition))
    }

    static func location(_ record: JournalRecord, trackerID: String?) -> OwnTracksMessage.Location {
        let fix = record.location
        let regions = record.insideRegions
        return OwnTracksMessage.Location(
            id: record.shortID,
            latitude: rounded(fix.latitude),
            longitude: rounded(fix.longitude),
            time: seconds(fix.timestamp ?? record.recordedAt),
            accuracy: integer(fix.horizontalAccuracy),
            altitude: integer(fix.altitudeMSL ?? fix.altitudeHAE),
            verticalAccuracy: integer(fix.verticalAccuracy),
            velocity: integer(fix.speed.map { $0 * 3.6 }),
            course: integer(fix.course),
            battery: record.battery,
            trackerID: trackerID,
            createdAt: seconds(record.recordedAt),
            inRegions: regions.isEmpty ? nil : regions.map { $0.condition?.name ?? $0.identifier },
            inRegionIDs: regions.isEmpty ? nil : regions.map(\.identifier)
        )
    }

    /// The transition of a region's event: an entry into a region the device was not inside,
    /// or an exit from one it was (a region first decided to be outside was never entered).
    static func transition(_ event: MonitorEvent, record: JournalRecord, trackerID: String?) -> OwnTracksMessage.Transition? {
        guard event.condition?.isRegion == true, event.state != .unknown else { return nil }
        let wasInside = record.insideRegions.contains { $0.identifier == event.identifier }
        guard wasInside != (event.state == .satisfied) else { return nil }
        var created: Date?
        if case .circle(let region) = event.condition { created = region.created }
        return OwnTracksMessage.Transition(
            id: record.shortID,
            event: event.state == .satisfied ? "enter" : "leave",
            description: event.condition?.name ?? event.identifier,
            waypointTime: created.map(seconds),
            time: seconds(event.date),
            latitude: rounded(event.location.latitude),
            longitude: rounded(event.location.longitude),
            accuracy: integer(event.location.horizontalAccuracy),
            trackerID: trackerID,
            regionID: event.identifier
        )
    }

    static func encode(_ message: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Finite numbers and strings only: encoding cannot fail.
        return String(decoding: (try? encoder.encode(message)) ?? Data("{}".utf8), as: UTF8.self)
    }

    private static func seconds(_ date: Date) -> Int64 { Int64(date.timeIntervalSince1970.rounded(.down)) }

    /// Degrees to 7 decimals (about a centimetre), as OwnTracks apps send them.
    private static func rounded(_ degrees: Double) -> Double { (degrees * 1e7).rounded() / 1e7 }

    private static func integer(_ value: Double?) -> Int64? {
        guard let value, value.isFinite, abs(value) < 1e15 else { return nil }
        return Int64(value.rounded())
    }
}
